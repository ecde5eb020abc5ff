// SPDX-License-Identifier: MIT
/*
 * event.c - response to external events (docs/definitions.md, "Event
 * response"): every source goes through one handler loop.
 *
 *   self   a stimulus thread fires at --rate Hz: it publishes (sequence
 *          number, timestamp) in memory shared with the handler, then
 *          writes 1 to an eventfd.  latency = handler wake-up time -
 *          stimulus timestamp.  An eventfd adds up writes the handler has
 *          not read yet, so missed events are counted from the stimulus'
 *          sequence numbers: a jump of k + 1 is k missed events.
 *   uio    /dev/uioN: read() returns the 4-byte interrupt count, write() of
 *          a 4-byte 1 re-enables the interrupt.  Missed = count jumps.  No
 *          event timestamp exists, so the series holds the interval between
 *          handled events, or its deviation from --period.
 *   gpio   a GPIO character device line (v2 uAPI) with edge events: each
 *          struct gpio_v2_line_event carries the kernel's CLOCK_MONOTONIC
 *          timestamp; latency = CLOCK_MONOTONIC now - timestamp, missed =
 *          gaps in line_seqno.  out=LINE is toggled at every event so a scope
 *          can measure the whole response.
 *
 * For tests without hardware, uio-fd:N and gpio-fd:N read the same formats
 * from an already open descriptor (a socketpair or raw pty speaking the UIO
 * protocol, a pipe carrying gpio_v2_line_event records).  Only the GPIO
 * line-request and set-values ioctls (event_gpio_request, event_gpio_set)
 * and the open of a device node are not reachable that way.
 *
 * The handler sleeps in poll() with a 100 ms timeout, so a silent device
 * still lets the run end on time or on a signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* without kernel headers (e.g. plain musl-gcc) the gpio source is refused */
#if defined(__has_include)
#if __has_include(<linux/gpio.h>)
#include <linux/gpio.h>
#endif
#endif

#include "clocksleep.h"
#include "common.h"
#include "fdio.h"
#include "fmt.h"
#include "json.h"
#include "opt.h"
#include "percpu.h"
#include "rtprobe.h"
#include "run.h"
#include "series.h"
#include "sim.h"
#include "testdesc.h"

#define EVENT_POLL_MS 100
#define EVENT_MAX_RATE_HZ 100000.0

/* The GPIO v2 event record as the kernel ABI fixes it (48 bytes). */
struct event_gpio_record {
	uint64_t timestamp_ns;
	uint32_t id;
	uint32_t offset;
	uint32_t seqno;
	uint32_t line_seqno;
	uint32_t padding[6];
};

#ifdef GPIO_V2_GET_LINE_IOCTL
_Static_assert(sizeof(struct event_gpio_record) ==
	       sizeof(struct gpio_v2_line_event),
	       "gpio_v2_line_event layout");
#endif

enum event_kind { EVENT_SELF, EVENT_UIO, EVENT_GPIO };
enum event_edge { EDGE_RISING, EDGE_FALLING, EDGE_BOTH };

static const char *const event_kind_names[] = { "self", "uio", "gpio" };
static const char *const event_edge_names[] = { "rising", "falling", "both",
						NULL };

struct event_config {
	const char *source_text;   /* --source as given */
	enum event_kind kind;
	char path[256];            /* device node; "" for an inherited fd */
	int given_fd;              /* uio-fd:N / gpio-fd:N, else -1 */
	unsigned int line;         /* gpio input line */
	int out_line;              /* gpio output line, -1: none */
	enum event_edge edge;
	double rate_hz;            /* self */
	uint64_t period_ns;        /* self: 1/rate; uio: --period or 0 */
	uint64_t handler_work_ns;
	int stimulus_cpu;          /* self */
	int stimulus_priority;     /* self */
	uint64_t max_missed;
};

/*
 * What the stimulus publishes: a sequence lock around (seq, stamp).  The
 * writer makes gen odd, stores both, makes gen even; a reader retries while
 * gen is odd or changed under it.
 */
struct event_shared {
	atomic_uint_fast64_t gen;
	atomic_uint_fast64_t seq;
	atomic_uint_fast64_t stamp_ns;
	atomic_bool handler_done;
};

struct event_test {
	struct event_config cfg;
	const struct rtp_common *common;
	struct run *run;
	struct series *series;
	int fd;                    /* what the handler polls and reads */
	int out_fd;                /* gpio output line, -1: none */
	struct event_shared shared;
	/* handler results (read after it ended) */
	uint64_t handled, missed, missed_warmup, duplicates, out_toggles;
	bool source_closed;
	char error[200];
	/* stimulus results */
	uint64_t sent, stimulus_overruns;
};

/* Spin for ns nanoseconds (the deliberate handler work). */
static void event_busy(uint64_t ns)
{
	uint64_t end;

	if (!ns)
		return;
	end = clock_now_ns(CLOCK_MONOTONIC) + ns;
	while (clock_now_ns(CLOCK_MONOTONIC) < end)
		;
}

/* ---- GPIO character device: the only code tests cannot reach ---- */

#ifdef GPIO_V2_GET_LINE_IOCTL
/* Request one line of a chip with flags; returns the line fd or -1 (errno). */
static int event_gpio_request(int chip_fd, unsigned int line, uint64_t flags)
{
	struct gpio_v2_line_request req;

	memset(&req, 0, sizeof(req));
	req.offsets[0] = line;
	req.num_lines = 1;
	req.config.flags = flags;
	fmt_snprintf(req.consumer, sizeof(req.consumer), "rtprobe");
	if (ioctl(chip_fd, GPIO_V2_GET_LINE_IOCTL, &req) < 0)
		return -1;
	return req.fd;
}

/* Drive a requested output line to level; 0 or -1 (errno). */
static int event_gpio_set(int line_fd, int level)
{
	struct gpio_v2_line_values v = { .bits = (uint64_t)level, .mask = 1 };

	return ioctl(line_fd, GPIO_V2_LINE_SET_VALUES_IOCTL, &v);
}

/* Open the chip and request the input (and output) line; 0 or exit code. */
static int event_gpio_open(struct event_test *t)
{
	static const uint64_t edge_flags[] = {
		[EDGE_RISING] = GPIO_V2_LINE_FLAG_EDGE_RISING,
		[EDGE_FALLING] = GPIO_V2_LINE_FLAG_EDGE_FALLING,
		[EDGE_BOTH] = GPIO_V2_LINE_FLAG_EDGE_RISING |
			      GPIO_V2_LINE_FLAG_EDGE_FALLING,
	};
	const struct event_config *cfg = &t->cfg;
	int chip;

	chip = open(cfg->path, O_RDWR | O_CLOEXEC);
	if (chip < 0) {
		fmt_fprintf(stderr, "rtprobe: --source %s: open %s: %s; is the "
			    "GPIO chip there (ls /dev/gpiochip*) and are you "
			    "root?\n", cfg->source_text, cfg->path,
			    strerror(errno));
		return RTP_EXIT_ENV;
	}
	t->fd = event_gpio_request(chip, cfg->line, GPIO_V2_LINE_FLAG_INPUT |
				   edge_flags[cfg->edge]);
	if (t->fd < 0) {
		fmt_fprintf(stderr, "rtprobe: --source %s: cannot request line %u "
			    "for edge events (%s); is it free (gpioinfo) and "
			    "able to interrupt?\n", cfg->source_text, cfg->line,
			    strerror(errno));
		close(chip);
		return RTP_EXIT_ENV;
	}
	if (cfg->out_line >= 0) {
		t->out_fd = event_gpio_request(chip,
					       (unsigned int)cfg->out_line,
					       GPIO_V2_LINE_FLAG_OUTPUT);
		if (t->out_fd < 0 || event_gpio_set(t->out_fd, 0)) {
			fmt_fprintf(stderr, "rtprobe: --source %s: cannot drive "
				    "out=%d (%s); is the line free and an "
				    "output?\n", cfg->source_text, cfg->out_line,
				    strerror(errno));
			close(chip);
			return RTP_EXIT_ENV;
		}
	}
	close(chip); /* the line fds stay valid */
	return 0;
}
#else
/* Toolchain headers without the GPIO v2 uAPI: the output cannot be driven. */
static int event_gpio_set(int line_fd, int level)
{
	(void)line_fd;
	(void)level;
	errno = ENOSYS;
	return -1;
}

/* Toolchain headers without the GPIO v2 uAPI: refuse the device source. */
static int event_gpio_open(struct event_test *t)
{
	fmt_fprintf(stderr, "rtprobe: --source %s: this rtprobe was built "
		    "without the GPIO v2 uAPI headers (linux/gpio.h); rebuild "
		    "with kernel headers >= 5.10\n", t->cfg.source_text);
	return RTP_EXIT_ENV;
}
#endif

/* ---- sources: one event each, through the same handler loop ---- */

/* One handled event as the handler loop needs it. */
struct event_item {
	uint64_t t_ns;        /* event time relative to t0 (run clock) */
	int64_t sample_ns;    /* the series value; < 0: no sample (first UIO) */
	uint64_t missed;      /* events lost just before this one */
	bool duplicate;       /* a wake-up without a new event (self) */
};

/* self: read the eventfd and the published (seq, stamp); 1, 0 or -1. */
static int event_take_self(struct event_test *t, uint64_t *last_seq,
			   struct event_item *it)
{
	struct event_shared *sh = &t->shared;
	uint64_t count, g1, g2, seq, stamp, now;
	ssize_t n;

	n = read(t->fd, &count, sizeof(count));
	now = run_now_ns(t->run);
	if (n < 0 && errno != EAGAIN && errno != EINTR) {
		fmt_snprintf(t->error, sizeof(t->error),
			     "event: read of the eventfd: %s", strerror(errno));
		return -1;
	}
	do {
		g1 = atomic_load_explicit(&sh->gen, memory_order_acquire);
		seq = atomic_load_explicit(&sh->seq, memory_order_relaxed);
		stamp = atomic_load_explicit(&sh->stamp_ns,
					     memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		g2 = atomic_load_explicit(&sh->gen, memory_order_relaxed);
	} while ((g1 & 1) || g1 != g2);
	if (seq == *last_seq) {
		it->duplicate = true;
		return 1;
	}
	it->missed = seq - *last_seq - 1;
	*last_seq = seq;
	it->t_ns = stamp - run_t0_ns(t->run);
	it->sample_ns = (int64_t)(now - stamp);
	return 1;
}

/* uio: read the count, re-enable; 1, 0 at end of file, or -1. */
static int event_take_uio(struct event_test *t, bool *have_last,
			  uint32_t *last_count, uint64_t *last_wake,
			  struct event_item *it)
{
	const uint32_t enable = 1;
	uint64_t now, interval, expect;
	uint32_t count;
	ssize_t n;

	n = fdio_read_full(t->fd, &count, sizeof(count));
	now = run_now_ns(t->run);
	if (n == 0)
		return 0;
	if (n < 0 || write(t->fd, &enable, sizeof(enable)) !=
		     (ssize_t)sizeof(enable)) {
		fmt_snprintf(t->error, sizeof(t->error), "event: --source %s: "
			     "%s: %s", t->cfg.source_text, n < 0 ? "read" :
			     "write to re-enable", strerror(errno));
		return -1;
	}
	it->t_ns = now - run_t0_ns(t->run);
	it->sample_ns = -1;
	if (*have_last) {
		it->missed = (uint32_t)(count - *last_count) - 1u;
		interval = now - *last_wake;
		if (t->cfg.period_ns) {
			expect = (1 + it->missed) * t->cfg.period_ns;
			interval = interval > expect ? interval - expect :
						       expect - interval;
		}
		it->sample_ns = (int64_t)interval;
	}
	*have_last = true;
	*last_count = count;
	*last_wake = now;
	return 1;
}

/* gpio: read one event record, toggle out; 1, 0 at end of file, or -1. */
static int event_take_gpio(struct event_test *t, uint32_t *last_seqno,
			   struct event_item *it)
{
	struct event_gpio_record ev;
	uint64_t now_mono, now;
	ssize_t n;

	n = fdio_read_full(t->fd, &ev, sizeof(ev));
	now_mono = clock_now_ns(CLOCK_MONOTONIC);
	now = run_now_ns(t->run);
	if (n == 0)
		return 0;
	if (n < 0) {
		fmt_snprintf(t->error, sizeof(t->error), "event: --source %s: "
			     "read: %s", t->cfg.source_text, strerror(errno));
		return -1;
	}
	if (t->out_fd >= 0) {
		if (event_gpio_set(t->out_fd, (int)(t->out_toggles & 1) ^ 1)) {
			fmt_snprintf(t->error, sizeof(t->error), "event: --source "
				     "%s: driving out=%d: %s", t->cfg.source_text,
				     t->cfg.out_line, strerror(errno));
			return -1;
		}
		t->out_toggles++;
	}
	it->missed = (uint32_t)(ev.line_seqno - *last_seqno) - 1u;
	*last_seqno = ev.line_seqno;
	it->t_ns = now - run_t0_ns(t->run);
	it->sample_ns = (int64_t)(now_mono - ev.timestamp_ns);
	return 1;
}

/* Record one item in the series and the counters; SERIES_DONE to end. */
static int event_record(struct event_test *t, const struct event_item *it)
{
	bool warmup = it->t_ns < t->common->warmup_ns;

	if (series_past_end(t->series, it->t_ns))
		return SERIES_DONE;
	t->handled++;
	if (it->missed) {
		if (warmup)
			t->missed_warmup += it->missed;
		else
			t->missed += it->missed;
		series_overrun(t->series, it->t_ns, it->missed);
	}
	if (it->sample_ns < 0)
		return SERIES_CONTINUE;
	return series_add(t->series, it->t_ns, it->sample_ns);
}

/* Simulated self source: draws, events exactly one period apart. */
static void event_simulate(struct event_test *t)
{
	struct sim_stream *sim = series_sim(t->series);
	struct event_item it = { 0 };
	uint64_t k;

	for (k = 0; !run_stopping(t->run); k++) {
		it.t_ns = k * t->cfg.period_ns;
		it.sample_ns = (int64_t)sim_next_ns(sim);
		if (event_record(t, &it) == SERIES_DONE)
			break;
	}
}

/*
 * event_record answered SERIES_BUSY: the probe itself (--break-on) held the
 * handler after the event it took at t_ns.  The hold is a gap (series.h); the
 * next event taken waited for the probe, not for the system: it is no sample,
 * and the events it skipped are not counted missed.  Returns true.
 */
static __attribute__((noinline)) bool event_held(struct event_test *t,
						 uint64_t t_ns)
{
	uint64_t now = run_now_ns(t->run) - run_t0_ns(t->run);

	if (now > t_ns)
		series_gap(t->series, t_ns, now - t_ns);
	return true;
}

/* The handler thread: wait, take the event, record, work; until done. */
static void *event_handler(void *arg)
{
	struct event_test *t = arg;
	struct pollfd pfd = { .fd = t->fd, .events = POLLIN };
	struct event_item it;
	uint64_t last_seq = 0, last_wake = 0;
	uint32_t last_count = 0, last_seqno = 0;
	bool have_last = false, held = false;
	int rc;

	if (SIMULATED(t->common->simulate)) {
		event_simulate(t);
		goto out;
	}
	(void)clock_sleep_until(t->common->clock, run_t0_ns(t->run));
	while (!run_stopping(t->run)) {
		rc = poll(&pfd, 1, EVENT_POLL_MS);
		if (rc < 0 && errno != EINTR) {
			fmt_snprintf(t->error, sizeof(t->error),
				     "event: poll on --source %s: %s",
				     t->cfg.source_text, strerror(errno));
			break;
		}
		if (rc <= 0) {
			if (series_past_end(t->series, run_now_ns(t->run) -
					    run_t0_ns(t->run)))
				break;
			continue;
		}
		memset(&it, 0, sizeof(it));
		if (t->cfg.kind == EVENT_SELF)
			rc = event_take_self(t, &last_seq, &it);
		else if (t->cfg.kind == EVENT_UIO)
			rc = event_take_uio(t, &have_last, &last_count,
					    &last_wake, &it);
		else
			rc = event_take_gpio(t, &last_seqno, &it);
		if (rc < 0)
			break;
		if (rc == 0) {
			t->source_closed = true;
			break;
		}
		if (it.duplicate) {
			t->duplicates++;
			continue;
		}
		if (held) {
			held = false; /* it waited for the probe: no sample */
			continue;
		}
		rc = event_record(t, &it);
		if (rc == SERIES_DONE)
			break;
		if (rc == SERIES_BUSY)
			held = event_held(t, it.t_ns);
		event_busy(t->cfg.handler_work_ns);
	}
out:
	atomic_store(&t->shared.handler_done, true);
	if (t->error[0])
		series_fail(t->series, t->error);
	series_finish(t->series);
	return NULL;
}

/* Publish (seq, stamp) under the sequence lock. */
static void event_publish(struct event_shared *sh, uint64_t seq,
			  uint64_t stamp)
{
	uint64_t g = atomic_load_explicit(&sh->gen, memory_order_relaxed);

	atomic_store_explicit(&sh->gen, g + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&sh->seq, seq, memory_order_relaxed);
	atomic_store_explicit(&sh->stamp_ns, stamp, memory_order_relaxed);
	atomic_store_explicit(&sh->gen, g + 2, memory_order_release);
}

/*
 * The stimulus thread (self source): at each deadline t0 + k / rate stamp
 * the time, publish it, signal the eventfd.  A wake-up later than the next
 * deadline skips the deadlines already past (counted as stimulus overruns,
 * not as missed events: those events never happened).
 */
static void *event_stimulus(void *arg)
{
	struct event_test *t = arg;
	const uint64_t one = 1;
	uint64_t next = run_t0_ns(t->run), now;

	while (!atomic_load(&t->shared.handler_done) &&
	       !run_stopping(t->run)) {
		(void)clock_sleep_until(t->common->clock, next);
		now = run_now_ns(t->run);
		t->sent++;
		event_publish(&t->shared, t->sent, now);
		if (write(t->fd, &one, sizeof(one)) != (ssize_t)sizeof(one) &&
		    errno != EAGAIN) {
			/* the handler would see nothing more: end the run */
			fmt_fprintf(stderr, "rtprobe: event: stimulus write to "
				    "the eventfd: %s\n", strerror(errno));
			run_request_stop(t->run, "error");
			break;
		}
		next += t->cfg.period_ns;
		while (next <= now) {
			next += t->cfg.period_ns;
			t->stimulus_overruns++;
		}
	}
	return NULL;
}

/* Check that descriptor fd of uio-fd:N / gpio-fd:N is open; exits 2 if not. */
static int event_check_fd(const char *text, uint64_t fd)
{
	if (fcntl((int)fd, F_GETFD) < 0)
		opt_fail("--source", text, "descriptor %d is not open (these "
			 "sources are for tests that pass an open fd)",
			 (int)fd);
	return (int)fd;
}

/* Parse --source into cfg; exits 2 on a bad spec. */
static void event_parse_source(struct event_config *cfg, const char *text)
{
	const char *rest, *colon, *comma;
	uint64_t v;

	cfg->source_text = text;
	cfg->given_fd = -1;
	cfg->out_line = -1;
	cfg->path[0] = '\0';
	if (!strcmp(text, "self")) {
		cfg->kind = EVENT_SELF;
		return;
	}
	if (!strncmp(text, "uio-fd:", 7) || !strncmp(text, "gpio-fd:", 8)) {
		cfg->kind = text[0] == 'u' ? EVENT_UIO : EVENT_GPIO;
		rest = strchr(text, ':') + 1;
		if (opt_u64_try(rest, 0, 65535, &v, NULL, 0))
			opt_fail("--source", text, "give a descriptor number, "
				 "e.g. uio-fd:3");
		cfg->given_fd = event_check_fd(text, v);
		return;
	}
	if (!strncmp(text, "uio:", 4)) {
		cfg->kind = EVENT_UIO;
		if (!text[4] || strlen(text + 4) >= sizeof(cfg->path))
			opt_fail("--source", text, "give the device, e.g. "
				 "uio:/dev/uio0");
		fmt_snprintf(cfg->path, sizeof(cfg->path), "%s", text + 4);
		return;
	}
	if (!strncmp(text, "gpio:", 5)) {
		cfg->kind = EVENT_GPIO;
		rest = text + 5;
		colon = strrchr(rest, ':');
		if (!colon || colon == rest ||
		    (size_t)(colon - rest) >= sizeof(cfg->path))
			opt_fail("--source", text, "give chip and line, e.g. "
				 "gpio:/dev/gpiochip0:17[,out=18]");
		memcpy(cfg->path, rest, (size_t)(colon - rest));
		cfg->path[colon - rest] = '\0';
		comma = strchr(colon + 1, ',');
		{
			char line[32];
			size_t len = comma ? (size_t)(comma - colon - 1) :
					     strlen(colon + 1);

			if (len >= sizeof(line))
				opt_fail("--source", text, "bad line number");
			memcpy(line, colon + 1, len);
			line[len] = '\0';
			if (opt_u64_try(line, 0, 1023, &v, NULL, 0))
				opt_fail("--source", text, "line '%s' is not "
					 "a number 0..1023", line);
			cfg->line = (unsigned int)v;
		}
		if (comma) {
			if (strncmp(comma + 1, "out=", 4) ||
			    opt_u64_try(comma + 5, 0, 1023, &v, NULL, 0))
				opt_fail("--source", text, "after the line "
					 "only ',out=LINE' is allowed");
			if (v == cfg->line)
				opt_fail("--source", text, "out= must differ "
					 "from the input line");
			cfg->out_line = (int)v;
		}
		return;
	}
	opt_fail("--source", text, "use self, uio:/dev/uioN, "
		 "gpio:/dev/gpiochipN:LINE[,out=LINE], uio-fd:N or gpio-fd:N");
}

/* Open the source's descriptors (before the run starts); 0 or exit code. */
static int event_open_source(struct event_test *t)
{
	const struct event_config *cfg = &t->cfg;
	const uint32_t enable = 1;

	t->out_fd = -1;
	if (cfg->kind == EVENT_SELF) {
		t->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (t->fd < 0) {
			fmt_fprintf(stderr, "rtprobe: --source self: eventfd: %s; "
				    "the kernel needs CONFIG_EVENTFD\n",
				    strerror(errno));
			return RTP_EXIT_ENV;
		}
		return 0;
	}
	if (cfg->given_fd >= 0) {
		t->fd = cfg->given_fd;
		return 0;
	}
	if (cfg->kind == EVENT_GPIO)
		return event_gpio_open(t);
	t->fd = open(cfg->path, O_RDWR | O_CLOEXEC);
	if (t->fd < 0) {
		fmt_fprintf(stderr, "rtprobe: --source %s: open: %s; is a UIO "
			    "driver bound (ls /sys/class/uio) and are you root?\n",
			    cfg->source_text, strerror(errno));
		return RTP_EXIT_ENV;
	}
	/* a previous user may have left the interrupt disabled */
	if (write(t->fd, &enable, sizeof(enable)) != (ssize_t)sizeof(enable)) {
		fmt_fprintf(stderr, "rtprobe: --source %s: write to enable the "
			    "interrupt: %s; the driver needs an irqcontrol "
			    "(e.g. uio_pdrv_genirq)\n", cfg->source_text,
			    strerror(errno));
		close(t->fd);
		return RTP_EXIT_ENV;
	}
	return 0;
}

/* Write the start record's params. */
static void event_write_params(struct json *j, void *arg)
{
	const struct event_test *t = arg;
	const struct event_config *cfg = &t->cfg;

	json_str(j, "source", cfg->source_text);
	json_str(j, "kind", event_kind_names[cfg->kind]);
	json_bool(j, "emulated", cfg->given_fd >= 0);
	if (cfg->kind == EVENT_SELF) {
		json_str(j, "metric", "latency");
		json_str(j, "latency_from", "stimulus timestamp");
		json_double(j, "rate_hz", cfg->rate_hz);
		json_u64(j, "period_ns", cfg->period_ns);
		json_i64(j, "stimulus_cpu", cfg->stimulus_cpu);
		json_i64(j, "stimulus_priority", cfg->stimulus_priority);
	} else if (cfg->kind == EVENT_UIO) {
		json_str(j, "metric", cfg->period_ns ? "period_deviation" :
			 "interval");
		json_null(j, "latency_from");
		if (cfg->period_ns)
			json_u64(j, "period_ns", cfg->period_ns);
		else
			json_null(j, "period_ns");
	} else {
		json_str(j, "metric", "latency");
		json_str(j, "latency_from", "kernel event timestamp");
		json_u64(j, "line", cfg->line);
		if (cfg->out_line >= 0)
			json_i64(j, "out_line", cfg->out_line);
		else
			json_null(j, "out_line");
		json_str(j, "edge", event_edge_names[cfg->edge]);
	}
	json_u64(j, "handler_work_ns", cfg->handler_work_ns);
	json_u64(j, "max_missed", cfg->max_missed);
}

/* Write the result's data: event counts. */
static void event_write_data(struct json *j, void *arg)
{
	const struct event_test *t = arg;

	json_str(j, "kind", event_kind_names[t->cfg.kind]);
	json_u64(j, "handled", t->handled);
	json_u64(j, "missed", t->missed);
	json_u64(j, "missed_warmup", t->missed_warmup);
	json_bool(j, "source_closed", t->source_closed);
	if (t->cfg.kind == EVENT_SELF) {
		json_u64(j, "duplicates", t->duplicates);
		json_begin_object(j, "stimulus");
		json_u64(j, "sent", t->sent);
		json_u64(j, "overruns", t->stimulus_overruns);
		json_end_object(j);
	}
	if (t->cfg.kind == EVENT_GPIO)
		json_u64(j, "out_toggles", t->out_toggles);
	if (t->error[0])
		json_str(j, "error", t->error);
	else
		json_null(j, "error");
}

/* Verdicts: missed events within --max-missed; some event arrived. */
static void event_verdicts(struct run *r, void *arg)
{
	const struct event_test *t = arg;
	char name[64], detail[160];

	fmt_snprintf(name, sizeof(name), "missed events <= %llu",
		     (unsigned long long)t->cfg.max_missed);
	fmt_snprintf(detail, sizeof(detail), "%llu missed after warm-up, %llu "
		     "during it; %llu handled",
		     (unsigned long long)t->missed,
		     (unsigned long long)t->missed_warmup,
		     (unsigned long long)t->handled);
	run_add_verdict(r, name, t->missed <= t->cfg.max_missed, detail);
	if (!t->handled && !run_stopping(r))
		run_add_verdict(r, "events arrived", false,
				"no event in the whole run: check the source "
				"(wiring, interrupt, --source)");
}

/* Default stimulus CPU: an allowed CPU other than the handler's, else it. */
static int event_default_stimulus_cpu(int handler_cpu)
{
	cpu_set_t set;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set))
		return handler_cpu;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET((size_t)cpu, &set) && cpu != handler_cpu)
			return cpu;
	return handler_cpu;
}

enum {
	EVENT_OPT_SOURCE = 1,
	EVENT_OPT_RATE,
	EVENT_OPT_STIM_PRIO,
	EVENT_OPT_STIM_CPU,
	EVENT_OPT_WORK,
	EVENT_OPT_PERIOD,
	EVENT_OPT_EDGE,
	EVENT_OPT_MAX_MISSED,
};

/* An option given for one kind of source only, with its value. */
struct event_only {
	const char *option;
	const char *value;
};

/* Refuse options that do not belong to the chosen source. */
static void event_check_source_options(const struct event_config *cfg,
				       const struct event_only only[3],
				       const struct rtp_common *c)
{
	static const char *const what[] = {
		[EVENT_SELF] = "it applies to --source self only",
		[EVENT_UIO] = "it applies to uio sources only",
		[EVENT_GPIO] = "it applies to gpio sources only",
	};
	int k;

	for (k = EVENT_SELF; k <= EVENT_GPIO; k++)
		if ((int)cfg->kind != k && only[k].option)
			opt_refuse(only[k].option, only[k].value,
				   "this --source", what[k]);
	if (cfg->kind != EVENT_SELF && SIMULATED(c->simulate))
		opt_fail("--simulate", c->sim.text, "works with --source self "
			 "only (device sources are real or emulated)");
}

static const struct opt_desc event_opts[] = {
	{ .name = "source", .id = EVENT_OPT_SOURCE, .type = OPT_TEXT,
	  .def = "self", .metavar = "SOURCE",
	  .help = HELP_EVENT_SOURCE },
	{ .name = "rate", .id = EVENT_OPT_RATE, .type = OPT_NUMBER,
	  .def = "1000", .metavar = "HZ",
	  .help = HELP_EVENT_RATE },
	{ .name = "stimulus-priority", .id = EVENT_OPT_STIM_PRIO,
	  .type = OPT_INTEGER,
	  .help = HELP_EVENT_STIMULUS_PRIORITY },
	{ .name = "stimulus-cpu", .id = EVENT_OPT_STIM_CPU, .type = OPT_CPU,
	  .help = HELP_EVENT_STIMULUS_CPU },
	{ .name = "handler-work", .id = EVENT_OPT_WORK, .type = OPT_DURATION,
	  .def = "0", .unit = "us",
	  .help = HELP_EVENT_HANDLER_WORK },
	{ .name = "period", .id = EVENT_OPT_PERIOD, .type = OPT_DURATION,
	  .unit = "us",
	  .help = HELP_EVENT_PERIOD },
	{ .name = "edge", .id = EVENT_OPT_EDGE, .type = OPT_CHOICE,
	  .def = "rising", .metavar = "E", .choices = event_edge_names,
	  .help = HELP_EVENT_EDGE },
	{ .name = "max-missed", .id = EVENT_OPT_MAX_MISSED,
	  .type = OPT_INTEGER, .def = "0",
	  .help = HELP_EVENT_MAX_MISSED },
	{ .name = NULL },
};

/* event's parse state: the test and what was given for which source. */
struct event_parse {
	struct event_test *t;
	struct event_only only[3];
	bool stim_prio_given, stim_cpu_given;
};

/* Defaults: source self at 1000 Hz, one handler. */
static void event_defaults(void *ctx, struct rtp_common *c)
{
	struct event_parse *ep = ctx;

	ep->t = calloc(1, sizeof(*ep->t));
	if (!ep->t) {
		fmt_fprintf(stderr, "rtprobe: event: out of memory\n");
		exit(RTP_EXIT_ENV);
	}
	c->threads_requested = 1;
	event_parse_source(&ep->t->cfg, "self");
	ep->t->cfg.rate_hz = 1000.0;
	ep->t->fd = -1;
	ep->t->out_fd = -1;
}

/* Note that option (with its value) applies to one kind of source only. */
static void event_only_to(struct event_parse *ep, int kind,
			  const char *option, const char *arg)
{
	ep->only[kind].option = option;
	ep->only[kind].value = arg;
}

/* Parse one of event's own options. */
static void event_option(void *ctx, struct rtp_common *c, int id,
			 const char *arg)
{
	struct event_parse *ep = ctx;
	struct event_test *t = ep->t;
	cpu_set_t one;

	(void)c;
	switch (id) {
	case EVENT_OPT_SOURCE:
		event_parse_source(&t->cfg, arg);
		break;
	case EVENT_OPT_RATE:
		t->cfg.rate_hz = opt_double("--rate", arg, 0.1,
					    EVENT_MAX_RATE_HZ);
		event_only_to(ep, EVENT_SELF, "--rate", arg);
		break;
	case EVENT_OPT_STIM_PRIO:
		t->cfg.stimulus_priority = (int)opt_u64("--stimulus-priority",
							arg, 1, 99);
		ep->stim_prio_given = true;
		event_only_to(ep, EVENT_SELF, "--stimulus-priority", arg);
		break;
	case EVENT_OPT_STIM_CPU:
		t->cfg.stimulus_cpu = (int)opt_u64("--stimulus-cpu", arg, 0,
						   CPU_SETSIZE - 1);
		CPU_ZERO(&one);
		CPU_SET((size_t)t->cfg.stimulus_cpu, &one);
		opt_cpulist_allowed("--stimulus-cpu", arg, &one);
		ep->stim_cpu_given = true;
		event_only_to(ep, EVENT_SELF, "--stimulus-cpu", arg);
		break;
	case EVENT_OPT_WORK:
		t->cfg.handler_work_ns = opt_duration("--handler-work", arg,
						      "us");
		break;
	case EVENT_OPT_PERIOD:
		t->cfg.period_ns = opt_duration("--period", arg, "us");
		if (!t->cfg.period_ns)
			opt_fail("--period", arg, "must be > 0");
		event_only_to(ep, EVENT_UIO, "--period", arg);
		break;
	case EVENT_OPT_EDGE:
		t->cfg.edge = (enum event_edge)opt_choice("--edge", arg,
							  event_edge_names);
		event_only_to(ep, EVENT_GPIO, "--edge", arg);
		break;
	default:
		t->cfg.max_missed = opt_u64("--max-missed", arg, 0,
					    UINT64_MAX);
	}
}

/* Refuse options of another kind of source. */
static void event_check(void *ctx, struct rtp_common *c)
{
	struct event_parse *ep = ctx;

	event_check_source_options(&ep->t->cfg, ep->only, c);
}

/* Run the handler (and the stimulus of source self). */
static int event_run(void *ctx, struct rtp_common *c, int argc, char **argv)
{
	struct event_parse *ep = ctx;
	struct event_test *t = ep->t;
	struct run *r;
	int rc;

	t->common = c;
	if (t->cfg.kind == EVENT_SELF) {
		t->cfg.period_ns = (uint64_t)(1e9 / t->cfg.rate_hz + 0.5);
		if (!ep->stim_cpu_given)
			t->cfg.stimulus_cpu =
				event_default_stimulus_cpu(c->cpu_list[0]);
		if (!ep->stim_prio_given)
			t->cfg.stimulus_priority = c->priority < 99 ?
						   c->priority + 1 : 99;
		if (c->policy == POLICY_OTHER && ep->stim_prio_given)
			opt_refuse("--stimulus-priority", "", "--policy other",
				   "priorities apply to fifo or rr only");
		if (c->policy == POLICY_OTHER)
			t->cfg.stimulus_priority = 0;
	}
	if (!SIMULATED(c->simulate)) {
		rc = event_open_source(t);
		if (rc) {
			free(t);
			return rc;
		}
	}

	r = run_create(c, argc, argv);
	t->run = r;
	t->series = percpu_add_series(r, c, 0);
	run_set_params(r, event_write_params, t);
	run_set_result_data(r, event_write_data, t);
	run_set_verdicts(r, event_verdicts, t);
	rc = run_begin(r);
	if (!rc) {
		run_spawn(r, event_handler, t, c->cpu_list[0], c->policy,
			  c->priority);
		if (t->cfg.kind == EVENT_SELF && !SIMULATED(c->simulate))
			run_spawn(r, event_stimulus, t, t->cfg.stimulus_cpu,
				  c->policy, t->cfg.stimulus_priority);
		rc = run_finish(r);
	}
	if (t->cfg.kind == EVENT_SELF && t->fd >= 0)
		close(t->fd);
	if (t->out_fd >= 0)
		close(t->out_fd);
	free(t);
	return rc;
}

const struct test_desc test_event = {
	.name = "event",
	.summary = "external event response (self, UIO, GPIO)",
	.intro = INTRO_EVENT,
	.examples = EXAMPLES_EVENT,
	.traits = TEST_TIMED | TEST_SERIES | TEST_WARMUP | TEST_SIMULATE |
		  TEST_NO_DEADLINE,
	.host = {
		.figures = TEST_LIST("handled", "missed", "kind"),
		.layouts = TEST_LIST("arm-preemptrt"),
	},
	.default_duration_ns = 3 * NSEC_PER_SEC,
	.cpu_option = "cpus",
	.options = event_opts,
	.refused = COMMON_BIT(C_THREADS),
	.refused_why = "event has one handler thread; pick its CPU with --cpus",
	.ctx_size = sizeof(struct event_parse),
	.defaults = event_defaults,
	.option = event_option,
	.check = event_check,
	.run = event_run,
};
