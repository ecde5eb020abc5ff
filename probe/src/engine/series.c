// SPDX-License-Identifier: MIT
/*
 * series.c - one thread's latency series: the producer side of the engine
 * (see series.h for the semantics and engine.h for the hand-over protocol).
 */
#include "series.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "fmt.h"
#include "sim.h"
#include "sort.h"

struct series {
	/* Read-only after creation. */
	const struct series_owner *owner;
	atomic_int *stop;
	int index;
	int cpu;
	bool simulated;
	uint64_t warmup_ns;        /* measured part's start: start + warmup */
	uint64_t window_ns;
	uint64_t end_ns;           /* + duration; UINT64_MAX with --loops */
	uint64_t loops;            /* 0: duration mode */
	uint64_t lowest_ns;        /* lowest threshold; UINT64_MAX: none */
	uint64_t break_on_ns;      /* UINT64_MAX: off */
	int nthresholds;
	uint64_t thresholds_ns[COMMON_MAX_THRESHOLDS];
	int worst_cap;
	_Atomic uint64_t origin_ns; /* series_set_origin() */
	_Atomic uint64_t start_ns;  /* series_start(): the warm-up's start */

	/* Producer state. */
	struct series_window win;
	struct hist32 *cur;
	uint64_t measured;         /* in the measured windows before win */
	/* Per-sample gates, set by series_enter() from win and the heap: */
	uint64_t next_ns;          /* min(win.end_ns, end_ns): roll or end */
	uint64_t watch_ns;         /* a sample >= this needs series_watch() */
	uint64_t count_done;       /* win.count that completes --loops; 0: none */
	int nworst;
	struct series_worst worst[COMMON_MAX_WORST]; /* min-heap on latency */
	uint64_t spikes_dropped;
	uint64_t raw_dropped;
	struct sim_stream sim;
	char error[160];

	/* Window queue (engine.h): slot i owns buf[i]; cur is slot[q_head]'s. */
	atomic_uint q_head;        /* windows published (producer) */
	atomic_uint q_tail;        /* windows taken (collector) */
	struct series_window slot[SERIES_SLOTS];
	uint64_t merged;           /* windows merged, every part */

	/* Spike ring. */
	atomic_uint spike_head;
	atomic_uint spike_tail;
	struct series_spike spike[SERIES_SPIKE_RING];

	/* Raw ring (NULL without --raw). */
	struct series_raw *raw;
	unsigned int raw_cap;      /* a power of two: slot = index & (cap - 1) */
	atomic_uint raw_head;
	atomic_uint raw_tail;

	struct hist32 buf[SERIES_SLOTS];
};

/* Fill w with the empty window (slot) that contains t_ns. */
static void series_slot(const struct series *s, uint64_t t_ns,
			struct series_window *w)
{
	uint64_t nwarm, k;

	memset(w, 0, sizeof(*w));
	w->min_ns = UINT64_MAX;
	if (t_ns < s->warmup_ns) {
		k = t_ns / s->window_ns;
		w->index = k;
		w->start_ns = k * s->window_ns;
		w->end_ns = w->start_ns + s->window_ns;
		if (w->end_ns > s->warmup_ns)
			w->end_ns = s->warmup_ns;
		w->warmup = true;
		return;
	}
	nwarm = (s->warmup_ns + s->window_ns - 1) / s->window_ns;
	k = (t_ns - s->warmup_ns) / s->window_ns;
	w->index = nwarm + k;
	w->start_ns = s->warmup_ns + k * s->window_ns;
	w->end_ns = w->start_ns + s->window_ns;
}

/* Smallest latency that enters the worst-N heap (UINT64_MAX: none can). */
static uint64_t series_worst_gate(const struct series *s)
{
	if (!s->worst_cap)
		return UINT64_MAX;
	if (s->nworst < s->worst_cap)
		return 0;
	if (s->worst[0].latency_ns == UINT64_MAX)
		return UINT64_MAX;
	return s->worst[0].latency_ns + 1;
}

/*
 * Set the per-sample gates for the current window, so that series_add's
 * common case is two comparisons (see series_add_slow for the rest):
 *   next_ns     t_ns >= it: the window or the measured part ends; 0 with
 *               --raw, so that every sample pushes its raw record;
 *   watch_ns    latency >= it: a threshold is crossed, or (measured windows)
 *               --break-on hit or the worst-N heap entered; at most 2^63, so
 *               a negative latency (as unsigned) passes too;
 *   count_done  the measured window's sample count that completes --loops
 *               (0: none).
 */
static void series_enter(struct series *s)
{
	uint64_t watch = UINT64_C(1) << 63;

	s->next_ns = s->win.end_ns < s->end_ns ? s->win.end_ns : s->end_ns;
	if (s->raw)
		s->next_ns = 0;
	if (s->lowest_ns < watch)
		watch = s->lowest_ns;
	s->count_done = 0;
	if (!s->win.warmup) {
		if (s->break_on_ns < watch)
			watch = s->break_on_ns;
		if (series_worst_gate(s) < watch)
			watch = series_worst_gate(s);
		if (s->loops > s->measured)
			s->count_done = s->loops - s->measured;
	}
	s->watch_ns = watch;
}

void series_set_origin(struct series *s, uint64_t origin_ns)
{
	atomic_store_explicit(&s->origin_ns, origin_ns, memory_order_release);
}

uint64_t series_origin(struct series *s)
{
	return atomic_load_explicit(&s->origin_ns, memory_order_acquire);
}

uint64_t series_start(struct series *s, uint64_t first_ns)
{
	uint64_t shift = first_ns < SERIES_START_MAX_NS ? first_ns :
			 SERIES_START_MAX_NS;

	if (s->end_ns != UINT64_MAX && shift > UINT64_MAX - s->end_ns)
		shift = UINT64_MAX - s->end_ns; /* centuries: never */
	s->warmup_ns += shift;
	if (s->end_ns != UINT64_MAX)
		s->end_ns += shift;
	/* No sample yet: the first window is recut on the new boundaries. */
	series_slot(s, 0, &s->win);
	series_enter(s);
	atomic_store_explicit(&s->start_ns, shift, memory_order_release);
	series_gap(s, 0, first_ns);
	return shift;
}

uint64_t series_start_ns(struct series *s)
{
	return atomic_load_explicit(&s->start_ns, memory_order_acquire);
}

void series_set_spike_level(struct series *s, uint64_t level_ns)
{
	if (level_ns < s->lowest_ns) {
		s->lowest_ns = level_ns;
		series_enter(s);
	}
}

struct series *series_create(const struct series_owner *owner,
			     const struct rtp_common *c, atomic_int *stop,
			     int index, int cpu)
{
	struct series *s;
	int i;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->owner = owner;
	s->stop = stop;
	s->index = index;
	s->cpu = cpu;
	s->simulated = SIMULATED(c->simulate);
	s->warmup_ns = c->warmup_ns;
	s->window_ns = c->window_ns;
	s->loops = c->loops;
	s->end_ns = UINT64_MAX;
	if (!c->loops && c->duration_ns &&
	    c->duration_ns <= UINT64_MAX - c->warmup_ns)
		s->end_ns = c->warmup_ns + c->duration_ns;
	s->nthresholds = c->nthresholds;
	for (i = 0; i < c->nthresholds; i++)
		s->thresholds_ns[i] = c->thresholds_ns[i];
	s->lowest_ns = c->nthresholds ? c->thresholds_ns[0] : UINT64_MAX;
	s->break_on_ns = c->break_on_ns ? c->break_on_ns : UINT64_MAX;
	s->worst_cap = c->worst_n;
	if (s->worst_cap > COMMON_MAX_WORST)
		s->worst_cap = COMMON_MAX_WORST;
	if (SIMULATED(c->simulate))
		sim_stream_init(&s->sim, &c->sim, (uint64_t)index);
	s->cur = &s->buf[0];
	series_slot(s, 0, &s->win);
	atomic_init(&s->start_ns, 0);
	atomic_init(&s->q_head, 0);
	atomic_init(&s->q_tail, 0);
	atomic_init(&s->spike_head, 0);
	atomic_init(&s->spike_tail, 0);
	atomic_init(&s->raw_head, 0);
	atomic_init(&s->raw_tail, 0);
	if (c->raw_path) {
		s->raw_cap = (unsigned int)c->raw_buffer;
		s->raw = malloc((size_t)s->raw_cap * sizeof(*s->raw));
		if (!s->raw) {
			free(s);
			return NULL;
		}
		/* Touch every page now: no page fault in the hot path. */
		memset(s->raw, 0xff, (size_t)s->raw_cap * sizeof(*s->raw));
	}
	series_enter(s);
	return s;
}

void series_destroy(struct series *s)
{
	if (!s)
		return;
	free(s->raw);
	free(s);
}

/* Windows published and not yet taken by the collector. */
static unsigned int series_queued(const struct series *s)
{
	return atomic_load_explicit(&s->q_head, memory_order_relaxed) -
	       atomic_load_explicit(&s->q_tail, memory_order_acquire);
}

/*
 * Simulated runs only (and series_finish, after measuring): sleep until the
 * collector took every queued window.  A real run's measuring thread never
 * comes here while it measures.
 */
static void series_wait_collector(struct series *s)
{
	struct timespec ts = { 0, 100000 };

	s->owner->notify(s->owner->ctx);
	while (series_queued(s))
		nanosleep(&ts, NULL);
}

/* Hand the current window to the collector and continue in the next slot. */
static void series_publish(struct series *s)
{
	unsigned int head = atomic_load_explicit(&s->q_head,
						 memory_order_relaxed);

	s->slot[head % SERIES_SLOTS] = s->win;
	atomic_store_explicit(&s->q_head, head + 1, memory_order_release);
	s->cur = &s->buf[(head + 1) % SERIES_SLOTS];
	if (SIMULATED(s->simulated))
		s->owner->notify(s->owner->ctx);
}

/* True when the current window holds anything worth a record. */
static bool series_has_data(const struct series *s)
{
	return s->win.count || s->win.overruns || s->win.gaps;
}

/*
 * May a real run publish the current window, given the phase of the next?
 * At most SERIES_SLOTS - 1 windows are queued (the producer fills the last
 * slot).  A warm-up window followed by another warm-up window leaves one
 * more slot free: the spare that the last warm-up window takes at the
 * warm-up/measured boundary, so that boundary never finds the queue full.
 */
static bool series_may_publish(const struct series *s, bool next_warmup)
{
	unsigned int limit = SERIES_SLOTS - 1;

	if (s->win.warmup && next_warmup)
		limit--;
	return series_queued(s) < limit;
}

/*
 * t_ns left the current window: publish it and open the slot of t_ns.  When
 * the collector is behind (queue full, see series_may_publish) a real run
 * merges: the current window grows to the end of the next one and counts
 * the merge; the measuring thread never waits.  Warm-up and measured
 * windows are never merged: the spare slot makes that boundary publish.  A
 * simulated run waits for the collector instead, so its records are
 * reproducible.
 */
static __attribute__((noinline)) void
series_roll(struct series *s, uint64_t t_ns)
{
	struct series_window next;
	uint64_t skipped;

	series_slot(s, t_ns, &next);
	if (series_has_data(s)) {
		if (SIMULATED(s->simulated)) {
			if (series_queued(s))
				series_wait_collector(s);
		} else if (!series_may_publish(s, next.warmup)) {
			/*
			 * Same phase here: the spare slot let the boundary
			 * publish.  The window covers indices index to
			 * index + merged; every window it grows over counts,
			 * empty ones skipped by a late wake-up too.
			 */
			skipped = next.index - s->win.index - s->win.merged;
			s->win.end_ns = next.end_ns;
			s->win.merged += skipped;
			s->merged += skipped;
			series_enter(s);
			return;
		}
		series_publish(s);
		if (!s->win.warmup)
			s->measured += s->win.count;
	}
	s->win = next;
	series_enter(s);
}

/* Simulated runs only: wait until the raw writer made room. */
static void series_wait_raw(struct series *s, unsigned int head)
{
	struct timespec ts = { 0, 100000 };

	while (head - atomic_load_explicit(&s->raw_tail, memory_order_acquire) >=
	       s->raw_cap)
		nanosleep(&ts, NULL);
}

/* Simulated runs only: wait until the collector took some spikes. */
static void series_wait_spikes(struct series *s, unsigned int head)
{
	struct timespec ts = { 0, 100000 };

	s->owner->notify(s->owner->ctx);
	while (head - atomic_load_explicit(&s->spike_tail,
					   memory_order_acquire) >=
	       SERIES_SPIKE_RING)
		nanosleep(&ts, NULL);
}

/*
 * Queue a raw sample; a full ring drops it and counts the drop (a simulated
 * run waits instead, so its raw file is complete and reproducible).
 */
static __attribute__((noinline)) void
series_raw_push(struct series *s, uint64_t t_ns, int64_t latency_ns)
{
	unsigned int head = atomic_load_explicit(&s->raw_head,
						 memory_order_relaxed);
	unsigned int tail = atomic_load_explicit(&s->raw_tail,
						 memory_order_acquire);

	if (head - tail >= s->raw_cap) {
		if (!SIMULATED(s->simulated)) {
			s->raw_dropped++;
			return;
		}
		series_wait_raw(s, head);
	}
	s->raw[head & (s->raw_cap - 1)].t_ns = t_ns;
	s->raw[head & (s->raw_cap - 1)].latency_ns = latency_ns;
	atomic_store_explicit(&s->raw_head, head + 1, memory_order_release);
}

/* Count threshold crossings and queue a spike record (measured samples only). */
static __attribute__((noinline)) void
series_exceed(struct series *s, uint64_t t_ns, uint64_t lat)
{
	unsigned int head, tail;
	int i;

	for (i = 0; i < s->nthresholds && lat >= s->thresholds_ns[i]; i++)
		s->win.exceed[i]++;
	if (s->win.warmup)
		return;
	head = atomic_load_explicit(&s->spike_head, memory_order_relaxed);
	tail = atomic_load_explicit(&s->spike_tail, memory_order_acquire);
	if (head - tail >= SERIES_SPIKE_RING) {
		if (!SIMULATED(s->simulated)) {
			s->spikes_dropped++;
			return;
		}
		series_wait_spikes(s, head);
	}
	s->spike[head % SERIES_SPIKE_RING].t_ns = t_ns;
	s->spike[head % SERIES_SPIKE_RING].latency_ns = lat;
	atomic_store_explicit(&s->spike_head, head + 1, memory_order_release);
}

/* Move the heap entry at i down until both children are larger. */
static void series_worst_sift(struct series_worst *h, int n, int i)
{
	struct series_worst tmp;
	int l, m;

	for (;;) {
		l = 2 * i + 1;
		m = i;
		if (l < n && h[l].latency_ns < h[m].latency_ns)
			m = l;
		if (l + 1 < n && h[l + 1].latency_ns < h[m].latency_ns)
			m = l + 1;
		if (m == i)
			return;
		tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

/* Keep the sample if it is among the worst N (min-heap: root is the least). */
static __attribute__((noinline)) void
series_worst_add(struct series *s, uint64_t t_ns, uint64_t lat)
{
	struct series_worst tmp;
	int i, p;

	if (s->nworst < s->worst_cap) {
		i = s->nworst++;
		s->worst[i].t_ns = t_ns;
		s->worst[i].latency_ns = lat;
		while (i > 0) {
			p = (i - 1) / 2;
			if (s->worst[p].latency_ns <= s->worst[i].latency_ns)
				break;
			tmp = s->worst[p];
			s->worst[p] = s->worst[i];
			s->worst[i] = tmp;
			i = p;
		}
		return;
	}
	s->worst[0].t_ns = t_ns;
	s->worst[0].latency_ns = lat;
	series_worst_sift(s->worst, s->nworst, 0);
}

/*
 * A sample at or above watch_ns: count threshold crossings and queue a spike,
 * and in a measured window check --break-on and the worst-N heap.
 */
static __attribute__((noinline)) int
series_watch(struct series *s, uint64_t t_ns, uint64_t lat)
{
	int rc = SERIES_CONTINUE;

	if (lat >= s->lowest_ns)
		series_exceed(s, t_ns, lat);
	if (s->win.warmup)
		return rc;
	if (lat >= s->break_on_ns &&
	    s->owner->break_hit(s->owner->ctx, s->index, t_ns, lat))
		rc = SERIES_BUSY;
	if (s->worst_cap &&
	    (s->nworst < s->worst_cap || lat > s->worst[0].latency_ns)) {
		series_worst_add(s, t_ns, lat);
		series_enter(s);
	}
	return rc;
}

/* Add a latency (>= 0) to the current window's histogram and figures. */
static inline void series_count(struct series *s, uint64_t t_ns, uint64_t lat)
{
	struct series_window *w = &s->win;

	hist32_add(s->cur, lat);
	w->sum_ns += lat;
	w->last_t_ns = t_ns;
	if (lat < w->min_ns)
		w->min_ns = lat;
	if (lat > w->max_ns)
		w->max_ns = lat;
}

/*
 * series_add when a gate is passed: the window or the measured part ends, a
 * raw record is due, the latency is negative (counted as early, recorded as
 * 0) or at least watch_ns.
 */
static __attribute__((noinline)) int
series_add_slow(struct series *s, uint64_t t_ns, int64_t latency_ns)
{
	uint64_t lat = latency_ns < 0 ? 0 : (uint64_t)latency_ns;
	int rc = SERIES_CONTINUE;

	if (t_ns >= s->end_ns)
		return SERIES_DONE;
	if (t_ns >= s->win.end_ns)
		series_roll(s, t_ns);
	if (s->raw)
		series_raw_push(s, t_ns, latency_ns);
	if (latency_ns < 0)
		s->win.early++;
	series_count(s, t_ns, lat);
	if (lat >= s->watch_ns)
		rc = series_watch(s, t_ns, lat);
	if (++s->win.count == s->count_done)
		return SERIES_DONE;
	return rc;
}

/*
 * The per-sample path.  Everything rare (window roll, measured end, raw
 * push, negative latency, threshold crossing, --break-on, worst-N insert) is
 * behind two gates that series_enter() sets, and out of line, so the common
 * case is a few comparisons and the histogram update, with no call and so no
 * registers to save: measured in callgrind instructions per sample, see
 * BENCHMARKS.md ("cyclic hot loop: every build against
 * cyclictest").
 */
int series_add(struct series *s, uint64_t t_ns, int64_t latency_ns)
{
	const uint64_t lat = (uint64_t)latency_ns;

	if (atomic_load_explicit(s->stop, memory_order_relaxed))
		return SERIES_DONE;
	if (t_ns >= s->next_ns || lat >= s->watch_ns)
		return series_add_slow(s, t_ns, latency_ns);
	series_count(s, t_ns, lat);
	return ++s->win.count == s->count_done ? SERIES_DONE : SERIES_CONTINUE;
}

void series_overrun(struct series *s, uint64_t t_ns, uint64_t n)
{
	if (t_ns >= s->end_ns)
		return;
	if (t_ns >= s->win.end_ns)
		series_roll(s, t_ns);
	s->win.overruns += n;
}

void series_overrun_periods(struct series *s, uint64_t first_ns,
			    uint64_t period_ns, uint64_t n)
{
	uint64_t in_warmup, before_end;

	if (!n || first_ns >= s->end_ns)
		return;
	if (first_ns < s->warmup_ns) {
		/* Deadlines first + j * period below warmup_ns (ceiling, no overflow). */
		in_warmup = (s->warmup_ns - first_ns - 1) / period_ns + 1;
		if (in_warmup > n)
			in_warmup = n;
		series_overrun(s, first_ns, in_warmup);
		n -= in_warmup;
		first_ns += in_warmup * period_ns;
		if (!n || first_ns >= s->end_ns)
			return;
	}
	before_end = (s->end_ns - first_ns - 1) / period_ns + 1;
	series_overrun(s, first_ns, n < before_end ? n : before_end);
}

/* Count one gap of len_ns in the window of t_ns. */
static void series_gap_in(struct series *s, uint64_t t_ns, uint64_t len_ns)
{
	if (t_ns >= s->win.end_ns)
		series_roll(s, t_ns);
	s->win.gaps++;
	s->win.gap_ns += len_ns;
}

void series_gap(struct series *s, uint64_t t_ns, uint64_t len_ns)
{
	uint64_t part;

	if (!len_ns || t_ns >= s->end_ns)
		return;
	if (len_ns > s->end_ns - t_ns)
		len_ns = s->end_ns - t_ns;
	if (t_ns < s->warmup_ns && len_ns > s->warmup_ns - t_ns) {
		/* Split at the boundary: each part keeps its own. */
		part = s->warmup_ns - t_ns;
		series_gap_in(s, t_ns, part);
		series_gap_in(s, s->warmup_ns, len_ns - part);
		return;
	}
	series_gap_in(s, t_ns, len_ns);
}

uint64_t series_end_ns(const struct series *s)
{
	return s->end_ns;
}

bool series_past_end(const struct series *s, uint64_t t_ns)
{
	return t_ns >= s->end_ns;
}

void series_finish(struct series *s)
{
	if (series_has_data(s)) {
		/* Done measuring: waiting for a free slot costs no sample. */
		if (series_queued(s) >= SERIES_SLOTS - 1)
			series_wait_collector(s);
		series_publish(s);
		if (!s->win.warmup)
			s->measured += s->win.count;
		series_slot(s, s->win.end_ns, &s->win);
		series_enter(s);
	}
	s->owner->notify(s->owner->ctx);
}

void series_fail(struct series *s, const char *what)
{
	fmt_snprintf(s->error, sizeof(s->error), "%s", what);
	s->owner->stop(s->owner->ctx, "error");
	s->owner->notify(s->owner->ctx);
}

#ifndef RTPROBE_BOARD
struct sim_stream *series_sim(struct series *s)
{
	return SIMULATED(s->simulated) ? &s->sim : NULL;
}
#endif

int series_cpu(const struct series *s)
{
	return s->cpu;
}

int series_index(const struct series *s)
{
	return s->index;
}

bool series_take_window(struct series *s, struct series_window *w,
			struct hist32 **hist)
{
	unsigned int tail = atomic_load_explicit(&s->q_tail,
						 memory_order_relaxed);
	unsigned int head = atomic_load_explicit(&s->q_head,
						 memory_order_acquire);

	if (head == tail)
		return false;
	*w = s->slot[tail % SERIES_SLOTS];
	*hist = &s->buf[tail % SERIES_SLOTS];
	return true;
}

void series_window_done(struct series *s)
{
	unsigned int tail = atomic_load_explicit(&s->q_tail,
						 memory_order_relaxed);

	atomic_store_explicit(&s->q_tail, tail + 1, memory_order_release);
}

bool series_pop_spike(struct series *s, struct series_spike *out)
{
	unsigned int tail = atomic_load_explicit(&s->spike_tail,
						 memory_order_relaxed);
	unsigned int head = atomic_load_explicit(&s->spike_head,
						 memory_order_acquire);

	if (head == tail)
		return false;
	*out = s->spike[tail % SERIES_SPIKE_RING];
	atomic_store_explicit(&s->spike_tail, tail + 1, memory_order_release);
	return true;
}

unsigned int series_raw_drain(struct series *s, struct series_raw *out,
			      unsigned int max)
{
	unsigned int tail, head, n = 0;

	if (!s->raw)
		return 0;
	tail = atomic_load_explicit(&s->raw_tail, memory_order_relaxed);
	head = atomic_load_explicit(&s->raw_head, memory_order_acquire);
	while (tail + n != head && n < max) {
		out[n] = s->raw[(tail + n) & (s->raw_cap - 1)];
		n++;
	}
	atomic_store_explicit(&s->raw_tail, tail + n, memory_order_release);
	return n;
}

/* Order worst samples: larger latency first, then earlier time. */
static int series_worst_cmp(const void *a, const void *b)
{
	const struct series_worst *x = a, *y = b;

	if (x->latency_ns != y->latency_ns)
		return x->latency_ns < y->latency_ns ? 1 : -1;
	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	return 0;
}

int series_worst_sorted(struct series *s, struct series_worst *out, int max)
{
	struct series_worst sorted[COMMON_MAX_WORST];
	int n = s->nworst < max ? s->nworst : max;

	/* Sort a copy of the whole heap, then hand out at most max entries. */
	memcpy(sorted, s->worst, (size_t)s->nworst * sizeof(sorted[0]));
	sort_heap(sorted, (size_t)s->nworst, sizeof(sorted[0]),
		  series_worst_cmp);
	memcpy(out, sorted, (size_t)n * sizeof(*out));
	return n;
}

uint64_t series_spikes_dropped(const struct series *s)
{
	return s->spikes_dropped;
}

uint64_t series_raw_dropped(const struct series *s)
{
	return s->raw_dropped;
}

uint64_t series_merged(const struct series *s)
{
	return s->merged;
}


const char *series_error(const struct series *s)
{
	return s->error[0] ? s->error : NULL;
}
