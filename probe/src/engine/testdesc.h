/* SPDX-License-Identifier: MIT */
/*
 * testdesc.h - what a latency test is, in one struct: its name, the options
 * it takes (descriptors, see opt.h), its traits, and its hooks.
 *
 * main.c dispatches `rtprobe NAME` to test_main(), the one option-parsing
 * path every test shares:
 *
 *   ctx = calloc(ctx_size)            the test's own parse state
 *   common_defaults(); defaults()     set-up of common and own defaults
 *   opt_check_args()                  abbreviations and repeats refused
 *   opt_next() over own + common      own ids -> option(); common ids ->
 *                                     common_handle(), or refused with one
 *                                     line when the test's `refused` mask
 *                                     has it; --help -> test_usage()
 *   check()                           combinations of own options (may call
 *                                     test_refuse()); before common_finish
 *   common_finish()                   common combinations, CPUs resolved
 *   run()                             the measurement; returns the exit code
 *
 * `rtprobe describe --json` lists the same descriptors (describe.c), so the
 * host learns the tests, their options, types and defaults from the probe.
 */
#ifndef RTP_TESTDESC_H
#define RTP_TESTDESC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common.h"
#include "opt.h"

/* Traits of a test (struct test_desc.traits). */
#define TEST_TIMED       (1u << 0) /* runs for --duration or --loops */
#define TEST_SERIES      (1u << 1) /* latency series: thresholds, worst, raw */
#define TEST_WARMUP      (1u << 2) /* has a warm-up (--warmup) */
#define TEST_SIMULATE    (1u << 3) /* --simulate works */
#define TEST_NO_DEADLINE (1u << 4) /* --policy deadline is refused */
#define TEST_TRACE       (1u << 5) /* --trace and its options work */
#define TEST_RT_ONLY     (1u << 6) /* --policy other refused: RT priorities
				    * are what it measures (host: RT-only) */
#define TEST_OWN_CPUS    (1u << 7) /* every thread is one of its series, on
				    * its series' CPU (no partner thread) */

/*
 * What the host does with a test's results, beyond the traits above
 * (`describe --json` "host", docs/rtprobe.md): the host keeps no list of
 * tests of its own, so a new test needs nothing on the host unless it
 * wants a headline or a table of its own (rtbench/kinds/NAME.py).
 * String lists are NULL-terminated; NULL is an empty list.
 */
struct test_host {
	/* Its threads run flat out (RT throttling can stop them): "always",
	 * or the own option that makes it so when set (periodic's "busy"). */
	const char *busy_loop;
	/* Own list option: the test runs warm-up + duration once per item
	 * (wakeup's "mechanism"). */
	const char *runs_per;
	/* The result data keys its headline shows. */
	const char *const *figures;
	/* The result data keys its table shows (kept out of key/value rows). */
	const char *const *table_keys;
	/* The published studies' layouts (rtbench report --layout) it feeds. */
	const char *const *layouts;
};

/* A NULL-terminated list of strings, for struct test_host. */
#define TEST_LIST(...) ((const char *const[]){ __VA_ARGS__, NULL })

struct test_desc {
	const char *name;
	const char *summary;           /* one line, for rtprobe --help */
	const char *intro;             /* --help paragraph before the options */
	const char *examples;          /* --help lines after the options */
	unsigned int traits;
	struct test_host host;         /* what the host does with its results */
	uint64_t default_duration_ns;  /* of a timed test; nominal otherwise */
	const char *untimed_flag;      /* own flag that makes it untimed, or NULL */
	const char *cpu_option;        /* how CPUs are chosen: "cpus", "cpu" */
	const struct opt_desc *options; /* own options, NULL-name terminated */
	uint64_t refused;              /* COMMON_BIT()s of common options refused */
	const char *refused_why;       /* said when one of them is given */
	size_t ctx_size;               /* the test's parse state */
	/* Set own defaults; may change common ones (e.g. warm-up 0). */
	void (*defaults)(void *ctx, struct rtp_common *c);
	/* Parse one own option (exits 2 on a bad value). */
	void (*option)(void *ctx, struct rtp_common *c, int id,
		       const char *arg);
	/* Check own combinations before common_finish (may be NULL). */
	void (*check)(void *ctx, struct rtp_common *c);
	/* Run the test with the parsed options; returns the exit code. */
	int (*run)(void *ctx, struct rtp_common *c, int argc, char **argv);
	/* A test with its own command line (hackbench's short options):
	 * parses and runs; the hooks above are then unused. */
	int (*main)(int argc, char **argv);
};

/* The tests, NULL-terminated (catalogue.c). */
extern const struct test_desc *const rtp_tests[];

/* Parse argv with t's descriptors and run it; returns the exit code. */
int test_main(const struct test_desc *t, int argc, char **argv);

/* Print t's --help text. */
void test_usage(const struct test_desc *t, FILE *f);

/* Whether t takes the common option with id (not refused). */
int test_takes_common(const struct test_desc *t, int id);

/* Refuse an option that does not apply to t (one line, exit 2). */
__attribute__((noreturn))
void test_refuse(const struct test_desc *t, const char *option,
		 const char *value, const char *why);

#endif /* RTP_TESTDESC_H */
