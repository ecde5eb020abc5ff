// SPDX-License-Identifier: MIT
/*
 * test_series.c - the measuring side of a series never waits for its
 * collector on a real run (series.h, engine.h): with nobody taking windows
 * the producer merges them, keeps warm-up and measured windows apart through
 * the spare slot, counts gaps in the part they belong to, and reports the
 * probe's own work in the thread (--break-on) as SERIES_BUSY, and moves a
 * late thread's warm-up and measured part to its first deadline.  Everything
 * runs in one thread: a producer that waited for a collector would hang.
 */
#include <string.h>

#include "common.h"
#include "engine.h"
#include "hist.h"
#include "series.h"
#include "tap.h"

#define MS 1000000ULL

/* What the fake run saw of its series' callbacks. */
struct fake_run {
	int notified, stopped, breaks;
};

static void fake_notify(void *ctx)
{
	((struct fake_run *)ctx)->notified++;
}

static void fake_stop(void *ctx, const char *why)
{
	(void)why;
	((struct fake_run *)ctx)->stopped++;
}

static bool fake_break(void *ctx, int series_index, uint64_t t_ns,
		       uint64_t latency_ns)
{
	(void)series_index;
	(void)t_ns;
	(void)latency_ns;
	return ((struct fake_run *)ctx)->breaks++ == 0;
}

/* Options of a real (not simulated) run: 1 s warm-up, 100 ms windows, 1 s. */
static void real_options(struct rtp_common *c)
{
	memset(c, 0, sizeof(*c));
	c->warmup_ns = 1000 * MS;
	c->window_ns = 100 * MS;
	c->duration_ns = 1000 * MS;
}

/* Take every queued window: counts of samples per part, merges, windows. */
struct taken {
	int windows;
	uint64_t warm_count, count, warm_merged, merged;
	uint64_t warm_gap_ns, gap_ns, gaps;
	bool mixed;          /* a window held both parts */
};

static void take_all(struct series *s, struct taken *tk)
{
	struct series_window w;
	struct hist32 *h;

	while (series_take_window(s, &w, &h)) {
		tk->windows++;
		if (w.warmup) {
			tk->warm_count += w.count;
			tk->warm_merged += w.merged;
			tk->warm_gap_ns += w.gap_ns;
			tk->mixed |= w.end_ns > 1000 * MS;
		} else {
			tk->count += w.count;
			tk->merged += w.merged;
			tk->gap_ns += w.gap_ns;
			tk->mixed |= w.start_ns < 1000 * MS;
		}
		tk->gaps += w.gaps;
		hist32_clear(h);
		series_window_done(s);
	}
}

/* A collector that never comes: merges, the boundary kept, nothing lost. */
static void test_unread_collector(struct tap *t)
{
	struct fake_run fr = { 0, 0, 0 };
	struct series_owner owner = { &fr, fake_notify, fake_stop, fake_break };
	struct taken tk;
	struct rtp_common c;
	atomic_int stop;
	struct series *s;
	uint64_t k;
	int rc = SERIES_CONTINUE;

	real_options(&c);
	atomic_init(&stop, 0);
	s = series_create(&owner, &c, &stop, 0, 0);
	for (k = 0; k < 3000 && rc != SERIES_DONE; k++)
		rc = series_add(s, k * MS, 5000);
	tap_is_int(t, rc, SERIES_DONE, "the measured end is reached, never waiting");
	tap_is_u64(t, k, 2001, "2000 samples, then the end");
	memset(&tk, 0, sizeof(tk));
	take_all(s, &tk);
	tap_is_int(t, tk.windows, 2, "two windows queued: the first and the last warm-up");
	tap_is_u64(t, tk.warm_count, 1000, "every warm-up sample queued");
	tap_is_u64(t, tk.warm_merged, 8, "warm-up windows 2-9 merged into 1");
	series_finish(s);
	take_all(s, &tk);
	tap_is_int(t, tk.windows, 3, "one measured window after finish");
	tap_is_u64(t, tk.count, 1000, "every measured sample in it");
	tap_is_u64(t, tk.merged, 9, "measured windows 2-10 merged into 1");
	tap_is_u64(t, series_merged(s), 17, "merges counted in total");
	tap_ok(t, !tk.mixed, "no window mixes warm-up and measured time");
	series_destroy(s);
}

/* A collector that keeps up: one window per 100 ms, none merged. */
static void test_collector_keeps_up(struct tap *t)
{
	struct fake_run fr = { 0, 0, 0 };
	struct series_owner owner = { &fr, fake_notify, fake_stop, fake_break };
	struct taken tk;
	struct rtp_common c;
	atomic_int stop;
	struct series *s;
	uint64_t k;

	real_options(&c);
	atomic_init(&stop, 0);
	s = series_create(&owner, &c, &stop, 0, 0);
	memset(&tk, 0, sizeof(tk));
	for (k = 0; k < 2000; k++) {
		series_add(s, k * MS, 5000);
		take_all(s, &tk);
	}
	series_finish(s);
	take_all(s, &tk);
	tap_is_int(t, tk.windows, 20, "20 windows of 100 ms");
	tap_is_u64(t, tk.warm_merged + tk.merged, 0, "none merged");
	tap_is_u64(t, tk.warm_count + tk.count, 2000, "every sample");
	series_destroy(s);
}

/*
 * A merge over windows a late wake-up left empty counts each of them: a
 * merged window ends merged windows after its own (docs/schema.md).
 */
static void test_merge_counts_skipped(struct tap *t)
{
	struct fake_run fr = { 0, 0, 0 };
	struct series_owner owner = { &fr, fake_notify, fake_stop, fake_break };
	struct series_window w;
	struct hist32 *h;
	struct rtp_common c;
	atomic_int stop;
	struct series *s;
	bool spans = true;
	uint64_t merged = 0;

	real_options(&c);
	atomic_init(&stop, 0);
	s = series_create(&owner, &c, &stop, 0, 0);
	series_add(s, 0, 5000);
	series_add(s, 100 * MS, 5000);  /* window 0 queued: the warm-up limit */
	series_add(s, 200 * MS, 5000);  /* merged: windows 1-2 */
	series_add(s, 500 * MS, 5000);  /* merged over empty 3-4 into 5 */
	series_finish(s);
	while (series_take_window(s, &w, &h)) {
		spans &= w.end_ns - w.start_ns == (w.merged + 1) * c.window_ns;
		merged += w.merged;
		hist32_clear(h);
		series_window_done(s);
	}
	tap_ok(t, spans, "each window spans 1 + merged windows");
	tap_is_u64(t, merged, 4, "windows 2-5 merged into 1");
	tap_is_u64(t, series_merged(s), 4, "and so in total");
	series_destroy(s);
}

/* Gaps: counted where they lie, split at the warm-up boundary, clipped at the end. */
static void test_gaps(struct tap *t)
{
	struct fake_run fr = { 0, 0, 0 };
	struct series_owner owner = { &fr, fake_notify, fake_stop, fake_break };
	struct taken tk;
	struct rtp_common c;
	atomic_int stop;
	struct series *s;

	real_options(&c);
	atomic_init(&stop, 0);
	s = series_create(&owner, &c, &stop, 0, 0);
	memset(&tk, 0, sizeof(tk));
	series_add(s, 0, 5000);
	series_gap(s, 900 * MS, 300 * MS);
	take_all(s, &tk);
	series_gap(s, 1900 * MS, 500 * MS);
	series_finish(s);
	take_all(s, &tk);
	tap_is_u64(t, tk.warm_gap_ns, 100 * MS, "warm-up part of the gap");
	tap_is_u64(t, tk.gap_ns, 300 * MS, "measured parts, clipped at the end");
	tap_is_u64(t, tk.gaps, 3, "three gap parts");
	tap_is_u64(t, tk.warm_count + tk.count, 1, "a gap is no sample");
	series_destroy(s);
}

/* --break-on: the first hit did work in the thread, so series_add says BUSY. */
static void test_break_busy(struct tap *t)
{
	struct fake_run fr = { 0, 0, 0 };
	struct series_owner owner = { &fr, fake_notify, fake_stop, fake_break };
	struct rtp_common c;
	atomic_int stop;
	struct series *s;

	real_options(&c);
	c.break_on_ns = 100000;
	atomic_init(&stop, 0);
	s = series_create(&owner, &c, &stop, 0, 0);
	tap_is_int(t, series_add(s, 10 * MS, 200000), SERIES_CONTINUE,
		   "a warm-up sample never breaks");
	tap_is_int(t, series_add(s, 1100 * MS, 200000), SERIES_BUSY,
		   "the first hit: busy");
	tap_is_int(t, series_add(s, 1101 * MS, 200000), SERIES_CONTINUE,
		   "a later hit did nothing in the thread");
	tap_is_int(t, fr.breaks, 2, "both hits reported");
	series_destroy(s);
}

/*
 * A thread first ready 300 ms after t0 (series_start): its warm-up and
 * measured part start at its first deadline, so it still measures the 1 s
 * asked for; the 300 ms before are a gap of the warm-up.  Ready 7 s late,
 * past the 5 s bound: the parts move 5 s only and the rest of the set-up
 * is a gap of the measured part, which then holds no sample.
 */
static void test_late_start(struct tap *t)
{
	struct fake_run fr = { 0, 0, 0 };
	struct series_owner owner = { &fr, fake_notify, fake_stop, fake_break };
	struct series_window w;
	struct hist32 *h;
	struct taken tk;
	struct rtp_common c;
	atomic_int stop;
	struct series *s;
	uint64_t t_ns, first_measured = UINT64_MAX;
	int rc = SERIES_CONTINUE;

	real_options(&c);
	atomic_init(&stop, 0);
	s = series_create(&owner, &c, &stop, 0, 0);
	tap_is_u64(t, series_start(s, 300 * MS), 300 * MS, "shifted by 300 ms");
	tap_is_u64(t, series_start_ns(s), 300 * MS, "the shift is readable");
	tap_is_u64(t, series_end_ns(s), 2300 * MS, "the end moved with it");
	for (t_ns = 300 * MS; rc != SERIES_DONE; t_ns += MS) {
		rc = series_add(s, t_ns, 5000);
		while (series_take_window(s, &w, &h)) {
			if (!w.warmup && w.start_ns < first_measured)
				first_measured = w.start_ns;
			hist32_clear(h);
			series_window_done(s);
		}
	}
	tap_is_u64(t, t_ns, 2301 * MS, "done at the moved end");
	series_destroy(s);

	s = series_create(&owner, &c, &stop, 0, 0);
	memset(&tk, 0, sizeof(tk));
	series_start(s, 300 * MS);
	for (t_ns = 300 * MS; t_ns < 2300 * MS; t_ns += MS) {
		series_add(s, t_ns, 5000);
		if (t_ns % (50 * MS) == 0)
			take_all(s, &tk);
	}
	series_finish(s);
	take_all(s, &tk);
	tap_is_u64(t, tk.warm_count, 1000, "a whole 1 s warm-up after the gap");
	tap_is_u64(t, tk.count, 1000, "a whole 1 s measured");
	tap_is_u64(t, tk.warm_gap_ns, 300 * MS, "set-up: a warm-up gap");
	tap_is_u64(t, tk.gap_ns, 0, "no gap in the measured part");
	tap_is_u64(t, first_measured, 1300 * MS,
		   "measured windows start after the moved warm-up");
	series_destroy(s);

	s = series_create(&owner, &c, &stop, 0, 0);
	memset(&tk, 0, sizeof(tk));
	tap_is_u64(t, series_start(s, 7000 * MS), SERIES_START_MAX_NS,
		   "the shift is bounded");
	tap_is_int(t, series_add(s, 7000 * MS, 5000), SERIES_DONE,
		   "past the bound the measured part is over");
	series_finish(s);
	take_all(s, &tk);
	tap_is_u64(t, tk.warm_gap_ns, 6000 * MS, "the warm-up is all gap");
	tap_is_u64(t, tk.gap_ns, 1000 * MS, "so is the measured part");
	tap_is_u64(t, tk.warm_count + tk.count, 0, "no sample");
	series_destroy(s);
}

int main(void)
{
	struct tap t = { 0, 0 };

	test_unread_collector(&t);
	test_collector_keeps_up(&t);
	test_merge_counts_skipped(&t);
	test_gaps(&t);
	test_break_busy(&t);
	test_late_start(&t);
	return tap_done(&t);
}
