/* SPDX-License-Identifier: MIT */
/*
 * common.h - the options every latency test shares, parsed one way.
 *
 * The common options are descriptors (common_descriptors(), see opt.h);
 * the one parsing path of every test (testdesc.c) appends them to the
 * test's own, passes each common id to common_handle() (or refuses it when
 * the test does not take it), and after parsing calls common_finish(),
 * which validates combinations and resolves defaults (CPU list = every
 * allowed CPU), exiting 2 with one line on any error.
 *
 * Common options (ids >= COMMON_OPT_BASE, enum common_id):
 *   --cpus LIST          measuring CPUs, one thread each (default: all allowed)
 *   --threads N          number of measuring threads (default: one per CPU in
 *                        --cpus; N > CPUs is refused, N < CPUs uses the first N)
 *   --priority N         1..99 for fifo/rr (default 80)
 *   --policy P           fifo | rr | other | deadline (default fifo)
 *   --duration D         measured time after warm-up (default unit s)
 *   --loops N            measured samples per thread (instead of --duration)
 *   --warmup D           warm-up, measured but kept out of stats (default 1s)
 *   --window D           statistics window of each record (default 1s; whole
 *                        milliseconds from 100ms to 1h)
 *   --threshold LIST     comma list of latency thresholds (default unit us);
 *                        exceedances counted; any exceedance fails (exit 1)
 *   --worst N            keep the N worst samples with timestamps (default 10, max 64)
 *   --output FILE        NDJSON to FILE instead of stdout (temp name + rename)
 *   --json               NDJSON on stdout even when it is a terminal
 *   --raw FILE           raw samples file (see run.h)
 *   --raw-buffer N       raw ring records per thread (default 65536)
 *   --simulate SPEC      synthetic latencies (see sim.h); no RT set-up needed
 *   --break-on D         stop ftrace when a sample >= D (default unit us)
 *   --break-action A     stop | continue (default stop: end the run)
 *   --on-spike CMD       run CMD (via /bin/sh -c, outside RT threads) when a
 *                        sample crosses the lowest threshold; one at a time
 *   --clock C            monotonic | realtime | monotonic_raw | boottime | tai
 *   --no-mlock           do not mlockall (recorded)
 *   --no-pmqos           do not hold /dev/cpu_dma_latency at 0 (recorded)
 *   --pmqos-us N         value to hold in /dev/cpu_dma_latency (default 0)
 *   --verbose            human progress on stderr even when it is not a TTY
 *   --trace M            on | auto | off: kernel trace events of each spike
 *                        (cyclic, wakeup, noise; engine/trace.h)
 *   --trace-threshold D  trace samples >= D (default: lowest --threshold, else 100us)
 *   --trace-max-spikes N spikes traced per run (default 20; the rest counted)
 *   --trace-budget N     bytes of events per spike record (default 64KiB)
 *   --trace-margin D     window starts D before the expected wake-up
 *                        (default 1ms; cyclic: 2 x --interval if longer)
 *   --trace-buffer-kb N  per-CPU trace buffer (default: as is, at least 1024)
 *   --trace-force        trace even when another tracer uses tracefs
 *   --help               this text
 */
#ifndef RTP_COMMON_H
#define RTP_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "optparse.h"
#include "sim.h"

#define COMMON_OPT_BASE 1000
#define COMMON_BIT(id) (1ULL << ((id) - COMMON_OPT_BASE))

/* Option ids of the common options (what opt_next() returns). */
/* --window: whole milliseconds, at least 100 ms (shorter windows give a quick run
 * enough of them for its intervals and the extreme-value fit) */
#define WINDOW_STEP_NS 1000000ULL
#define WINDOW_MIN_NS 100000000ULL

enum common_id {
	C_CPUS = COMMON_OPT_BASE,
	C_THREADS,
	C_PRIORITY,
	C_POLICY,
	C_DURATION,
	C_LOOPS,
	C_WARMUP,
	C_WINDOW,
	C_THRESHOLD,
	C_WORST,
	C_OUTPUT,
	C_JSON,
	C_RAW,
	C_RAW_BUFFER,
	C_SIMULATE,
	C_BREAK_ON,
	C_BREAK_ACTION,
	C_ON_SPIKE,
	C_CLOCK,
	C_NO_MLOCK,
	C_NO_PMQOS,
	C_PMQOS_US,
	C_VERBOSE,
	C_TRACE,
	C_TRACE_THRESHOLD,
	C_TRACE_MAX_SPIKES,
	C_TRACE_BUDGET,
	C_TRACE_MARGIN,
	C_TRACE_BUFFER_KB,
	C_TRACE_FORCE,
	C_END
};
#define COMMON_MAX_THRESHOLDS 8
#define COMMON_MAX_WORST 64
#define COMMON_MAX_THREADS CPU_SETSIZE
/* The --trace options: taken only by tests with TEST_TRACE (testdesc.h). */
#define COMMON_TRACE_BITS (COMMON_BIT(C_TRACE) | COMMON_BIT(C_TRACE_THRESHOLD) | \
	COMMON_BIT(C_TRACE_MAX_SPIKES) | COMMON_BIT(C_TRACE_BUDGET) | \
	COMMON_BIT(C_TRACE_MARGIN) | COMMON_BIT(C_TRACE_BUFFER_KB) | \
	COMMON_BIT(C_TRACE_FORCE))
#define TRACE_DEFAULT_THRESHOLD_NS 100000ULL
#define TRACE_DEFAULT_MARGIN_NS 1000000ULL

enum rtp_policy { POLICY_FIFO, POLICY_RR, POLICY_OTHER, POLICY_DEADLINE };

struct rtp_common {
	const char *test;           /* subcommand name, e.g. "cyclic" */
	cpu_set_t cpus;             /* measuring CPUs */
	bool cpus_given;
	int cpu_list[COMMON_MAX_THREADS]; /* resolved: CPU of thread i */
	int nthreads;
	int threads_requested;      /* 0: one per CPU */
	enum rtp_policy policy;
	int priority;
	uint64_t duration_ns;       /* 0 when --loops is used */
	uint64_t loops;             /* 0 when --duration is used */
	uint64_t warmup_ns;
	uint64_t window_ns;          /* statistics window, default 1 s */
	uint64_t thresholds_ns[COMMON_MAX_THRESHOLDS]; /* ascending */
	int nthresholds;
	int worst_n;
	const char *output_path;
	const char *raw_path;
	uint64_t raw_buffer;
	bool simulate;
	struct sim_config sim;
	uint64_t break_on_ns;       /* 0: off */
	bool break_continue;
	const char *on_spike_cmd;
	clockid_t clock;
	const char *clock_name;
	bool mlock;
	bool pmqos;
	int pmqos_us;
	bool verbose;
	bool json;                  /* --json: NDJSON on a terminal stdout too */
	int trace_mode;             /* TRACE_OFF/AUTO/ON (engine/trace.h) */
	uint64_t trace_threshold_ns;
	int trace_max_spikes;
	uint64_t trace_budget;      /* bytes per trace record */
	uint64_t trace_margin_ns;   /* 0 until resolved (test may set a default) */
	uint64_t trace_buffer_kb;   /* 0: keep the size (at least 1024) */
	bool trace_force;
	/* deadline policy parameters (runtime/deadline/period), set by the test */
	uint64_t dl_runtime_ns, dl_deadline_ns, dl_period_ns;
	uint64_t given;             /* internal: bit per common option seen */
};

/* Fill defaults: fifo 80, 1 s warm-up, worst 10, monotonic clock, mlock, pmqos 0. */
void common_defaults(struct rtp_common *c, const char *test,
		     uint64_t default_duration_ns);

/* The common options' descriptors (see opt.h), NULL-name terminated. */
struct opt_desc;
const struct opt_desc *common_descriptors(void);

/* Handle a common option id; returns true if it was one. Exits 2 on bad values. */
bool common_handle(struct rtp_common *c, int id, const char *arg);

/* Report opt_next()'s error status (unknown option, missing or unwanted
 * value) and exit 2; test is the command named in the hint ("cyclic",
 * "load cpu"). */
__attribute__((noreturn)) void common_bad_option(const char *test,
						 const struct opt_parser *p,
						 int status);

/* Validate combinations, resolve CPUs/threads; exits 2 on contradictions
 * or on stray, the first positional argument left (NULL: none). */
void common_finish(struct rtp_common *c, const char *stray);

/* Print the common options' help. */
void common_usage(FILE *f);

/* Names for the start record. */
const char *common_policy_name(enum rtp_policy p);

/*
 * Refuse test for want of CPUs: one line "rtprobe: TEST: not applicable
 * here: needs N CPUs, the board has M (why); remedy" on stderr; returns
 * RTP_EXIT_ENV.  have: the CPUs it may use; online: the machine's (a smaller
 * have is said as an affinity limit).
 */
int common_needs_cpus(const char *test, int needed, int have, int online,
		      const char *why, const char *remedy);

#endif /* RTP_COMMON_H */
