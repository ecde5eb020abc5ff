// SPDX-License-Identifier: MIT
/*
 * common.c - the options every latency test shares (see common.h).
 */
#include "common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fmt.h"
#include "opt.h"
#include "rtprobe.h"

#define GIVEN(id) COMMON_BIT(id)
#define RAW_BUFFER_MIN 1024ULL
#define RAW_BUFFER_MAX (1ULL << 24)

static const char *const policy_names[] = { "fifo", "rr", "other",
					    "deadline", NULL };
static const char *const clock_names[] = { "monotonic", "realtime",
					   "monotonic_raw", "boottime", "tai",
					   NULL };
static const char *const break_actions[] = { "stop", "continue", NULL };
static const char *const trace_modes[] = { "off", "auto", "on", NULL };

/* The common options: their table, --help lines and describe entries. */
static const struct opt_desc common_descs[] = {
	{ .name = "cpus", .id = C_CPUS, .type = OPT_CPULIST,
	  .help = HELP_COMMON_CPUS },
	{ .name = "threads", .id = C_THREADS, .type = OPT_INTEGER,
	  .help = HELP_COMMON_THREADS },
	{ .name = "policy", .id = C_POLICY, .type = OPT_CHOICE, .def = "fifo",
	  .metavar = "P", .choices = policy_names,
	  .help = HELP_COMMON_POLICY },
	{ .name = "priority", .id = C_PRIORITY, .type = OPT_INTEGER,
	  .def = "80", .help = HELP_COMMON_PRIORITY },
	{ .name = "duration", .id = C_DURATION, .type = OPT_DURATION,
	  .unit = "s", .help = HELP_COMMON_DURATION },
	{ .name = "loops", .id = C_LOOPS, .type = OPT_INTEGER,
	  .help = HELP_COMMON_LOOPS },
	{ .name = "warmup", .id = C_WARMUP, .type = OPT_DURATION, .def = "1s",
	  .unit = "s",
	  .help = HELP_COMMON_WARMUP },
	{ .name = "window", .id = C_WINDOW, .type = OPT_DURATION, .def = "1s",
	  .unit = "s",
	  .help = HELP_COMMON_WINDOW },
	{ .name = "threshold", .id = C_THRESHOLD, .type = OPT_LIST,
	  .unit = "us",
	  .help = HELP_COMMON_THRESHOLD },
	{ .name = "worst", .id = C_WORST, .type = OPT_INTEGER, .def = "10",
	  .help = HELP_COMMON_WORST },
	{ .name = "output", .id = C_OUTPUT, .type = OPT_TEXT,
	  .metavar = "FILE",
	  .help = HELP_COMMON_OUTPUT },
	{ .name = "json", .id = C_JSON, .type = OPT_FLAG,
	  .help = HELP_COMMON_JSON },
	{ .name = "raw", .id = C_RAW, .type = OPT_TEXT, .metavar = "FILE",
	  .help = HELP_COMMON_RAW },
	{ .name = "raw-buffer", .id = C_RAW_BUFFER, .type = OPT_INTEGER,
	  .def = "65536",
	  .help = HELP_COMMON_RAW_BUFFER },
	{ .name = "simulate", .id = C_SIMULATE, .type = OPT_TEXT,
	  .metavar = "SPEC",
	  .help = HELP_COMMON_SIMULATE },
	{ .name = "break-on", .id = C_BREAK_ON, .type = OPT_DURATION,
	  .unit = "us",
	  .help = HELP_COMMON_BREAK_ON },
	{ .name = "break-action", .id = C_BREAK_ACTION, .type = OPT_CHOICE,
	  .def = "stop", .metavar = "A", .choices = break_actions,
	  .help = HELP_COMMON_BREAK_ACTION },
	{ .name = "on-spike", .id = C_ON_SPIKE, .type = OPT_TEXT,
	  .metavar = "CMD",
	  .help = HELP_COMMON_ON_SPIKE },
	{ .name = "clock", .id = C_CLOCK, .type = OPT_CHOICE,
	  .def = "monotonic", .metavar = "C", .choices = clock_names,
	  .help = HELP_COMMON_CLOCK },
	{ .name = "no-mlock", .id = C_NO_MLOCK, .type = OPT_FLAG,
	  .help = HELP_COMMON_NO_MLOCK },
	{ .name = "no-pmqos", .id = C_NO_PMQOS, .type = OPT_FLAG,
	  .help = HELP_COMMON_NO_PMQOS },
	{ .name = "pmqos-us", .id = C_PMQOS_US, .type = OPT_INTEGER,
	  .def = "0",
	  .help = HELP_COMMON_PMQOS_US },
	{ .name = "verbose", .id = C_VERBOSE, .type = OPT_FLAG,
	  .help = HELP_COMMON_VERBOSE },
	{ .name = "trace", .id = C_TRACE, .type = OPT_CHOICE, .def = "off",
	  .metavar = "M", .choices = trace_modes, .help = HELP_COMMON_TRACE },
	{ .name = "trace-threshold", .id = C_TRACE_THRESHOLD,
	  .type = OPT_DURATION, .unit = "us",
	  .help = HELP_COMMON_TRACE_THRESHOLD },
	{ .name = "trace-max-spikes", .id = C_TRACE_MAX_SPIKES,
	  .type = OPT_INTEGER, .def = "20",
	  .help = HELP_COMMON_TRACE_MAX_SPIKES },
	{ .name = "trace-budget", .id = C_TRACE_BUDGET, .type = OPT_SIZE,
	  .def = "64KiB", .help = HELP_COMMON_TRACE_BUDGET },
	{ .name = "trace-margin", .id = C_TRACE_MARGIN, .type = OPT_DURATION,
	  .unit = "us", .help = HELP_COMMON_TRACE_MARGIN },
	{ .name = "trace-buffer-kb", .id = C_TRACE_BUFFER_KB,
	  .type = OPT_INTEGER, .help = HELP_COMMON_TRACE_BUFFER_KB },
	{ .name = "trace-force", .id = C_TRACE_FORCE, .type = OPT_FLAG,
	  .help = HELP_COMMON_TRACE_FORCE },
	{ .name = NULL },
};

static const clockid_t clock_ids[] = { CLOCK_MONOTONIC, CLOCK_REALTIME,
				       CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME,
				       CLOCK_TAI };
/* Fill defaults: fifo 80, 1 s warm-up, worst 10, monotonic clock, mlock, pmqos 0. */
void common_defaults(struct rtp_common *c, const char *test,
		     uint64_t default_duration_ns)
{
	memset(c, 0, sizeof(*c));
	c->test = test;
	c->policy = POLICY_FIFO;
	c->priority = 80;
	c->duration_ns = default_duration_ns;
	c->warmup_ns = NSEC_PER_SEC;
	c->window_ns = NSEC_PER_SEC;
	c->worst_n = 10;
	c->raw_buffer = 65536;
	c->clock = CLOCK_MONOTONIC;
	c->clock_name = "monotonic";
	c->mlock = true;
	c->pmqos = true;
	c->pmqos_us = 0;
	c->trace_max_spikes = 20;
	c->trace_budget = 64 * 1024;
}

const struct opt_desc *common_descriptors(void)
{
	return common_descs;
}

/* Parse a duration that must be greater than zero, or exit 2. */
static uint64_t positive_duration(const char *option, const char *arg,
				  const char *unit)
{
	uint64_t ns = opt_duration(option, arg, unit);

	if (!ns)
		opt_fail(option, arg, "must be greater than zero");
	return ns;
}

/* Add every duration of a comma-separated --threshold list. */
static void add_thresholds(struct rtp_common *c, const char *arg)
{
	char item[64], err[160];
	const char *p = arg, *end;
	uint64_t ns;
	size_t len;

	for (;;) {
		end = strchr(p, ',');
		len = end ? (size_t)(end - p) : strlen(p);
		if (len >= sizeof(item))
			opt_fail("--threshold", arg, "item too long");
		memcpy(item, p, len);
		item[len] = '\0';
		if (opt_duration_try(item, "us", &ns, err, sizeof(err)))
			opt_fail("--threshold", arg, "'%s': %s", item, err);
		if (!ns)
			opt_fail("--threshold", arg,
				 "thresholds must be greater than zero");
		if (c->nthresholds >= COMMON_MAX_THRESHOLDS)
			opt_fail("--threshold", arg, "at most %d thresholds",
				 COMMON_MAX_THRESHOLDS);
		c->thresholds_ns[c->nthresholds++] = ns;
		if (!end)
			return;
		p = end + 1;
	}
}

/* Refuse an empty text for an option that takes a file or command. */
static const char *nonempty(const char *option, const char *arg)
{
	if (!*arg)
		opt_fail(option, arg, "must not be empty");
	return arg;
}

/* Handle a common option id; returns true if it was one. Exits 2 on bad values. */
bool common_handle(struct rtp_common *c, int id, const char *arg)
{
	int choice;

	if (id < COMMON_OPT_BASE || id >= C_END)
		return false;
	c->given |= GIVEN(id);
	switch ((enum common_id)id) {
	case C_CPUS:
		opt_cpulist("--cpus", arg, &c->cpus);
		c->cpus_given = true;
		break;
	case C_THREADS:
		c->threads_requested =
			(int)opt_u64("--threads", arg, 1, COMMON_MAX_THREADS);
		break;
	case C_PRIORITY:
		c->priority = (int)opt_u64("--priority", arg, 1, 99);
		break;
	case C_POLICY:
		c->policy = (enum rtp_policy)opt_choice("--policy", arg,
							 policy_names);
		break;
	case C_DURATION:
		c->duration_ns = positive_duration("--duration", arg, "s");
		break;
	case C_LOOPS:
		c->loops = opt_u64("--loops", arg, 1, UINT64_MAX);
		break;
	case C_WARMUP:
		c->warmup_ns = opt_duration("--warmup", arg, "s");
		break;
	case C_WINDOW:
		c->window_ns = opt_duration("--window", arg, "s");
		if (c->window_ns % WINDOW_STEP_NS ||
		    c->window_ns < WINDOW_MIN_NS ||
		    c->window_ns > 3600 * NSEC_PER_SEC)
			opt_fail("--window", arg,
				 "must be whole milliseconds from 100ms to 1h");
		break;
	case C_THRESHOLD:
		add_thresholds(c, arg);
		break;
	case C_WORST:
		c->worst_n = (int)opt_u64("--worst", arg, 0, COMMON_MAX_WORST);
		break;
	case C_OUTPUT:
		c->output_path = nonempty("--output", arg);
		break;
	case C_RAW:
		c->raw_path = nonempty("--raw", arg);
		break;
	case C_RAW_BUFFER:
		c->raw_buffer = opt_u64("--raw-buffer", arg, RAW_BUFFER_MIN,
					RAW_BUFFER_MAX);
		if (c->raw_buffer & (c->raw_buffer - 1))
			opt_fail("--raw-buffer", arg,
				 "must be a power of two (e.g. 65536)");
		break;
	case C_SIMULATE: {
#ifdef RTPROBE_BOARD
		opt_fail("--simulate", arg, "this board build of rtprobe "
			 "has no simulation; run --simulate with a native "
			 "build");
#else
		char err[200];

		if (sim_parse(arg, &c->sim, err, sizeof(err)))
			opt_fail("--simulate", arg, "%s", err);
		c->simulate = true;
		break;
#endif
	}
	case C_BREAK_ON:
		c->break_on_ns = positive_duration("--break-on", arg, "us");
		break;
	case C_BREAK_ACTION:
		c->break_continue =
			opt_choice("--break-action", arg, break_actions) == 1;
		break;
	case C_ON_SPIKE:
		c->on_spike_cmd = nonempty("--on-spike", arg);
		break;
	case C_CLOCK:
		choice = opt_choice("--clock", arg, clock_names);
		c->clock = clock_ids[choice];
		c->clock_name = clock_names[choice];
		break;
	case C_NO_MLOCK:
		c->mlock = false;
		break;
	case C_NO_PMQOS:
		c->pmqos = false;
		break;
	case C_PMQOS_US:
		c->pmqos_us = (int)opt_u64("--pmqos-us", arg, 0, 2000000000);
		break;
	case C_VERBOSE:
		c->verbose = true;
		break;
	case C_JSON:
		c->json = true;
		break;
	case C_TRACE:
		c->trace_mode = opt_choice("--trace", arg, trace_modes);
		break;
	case C_TRACE_THRESHOLD:
		c->trace_threshold_ns = positive_duration("--trace-threshold",
							  arg, "us");
		break;
	case C_TRACE_MAX_SPIKES:
		c->trace_max_spikes = (int)opt_u64("--trace-max-spikes", arg, 1,
						   100000);
		break;
	case C_TRACE_BUDGET:
		c->trace_budget = opt_size("--trace-budget", arg);
		if (c->trace_budget < 1024 || c->trace_budget > (8u << 20))
			opt_fail("--trace-budget", arg, "must be from 1KiB to "
				 "8MiB");
		break;
	case C_TRACE_MARGIN:
		c->trace_margin_ns = positive_duration("--trace-margin", arg,
						       "us");
		break;
	case C_TRACE_BUFFER_KB:
		c->trace_buffer_kb = opt_u64("--trace-buffer-kb", arg, 64,
					     4u << 20);
		break;
	case C_TRACE_FORCE:
		c->trace_force = true;
		break;
	case C_END:
		return false;
	}
	return true;
}

/*
 * Report opt_next()'s error status and exit 2, saying which it was: an
 * unknown option, a missing value, or a value given to a flag.  Short
 * options are all unknown to the tests (every option has a long form only).
 */
void common_bad_option(const char *test, const struct opt_parser *p,
		       int status)
{
	const char *bad = p->element ? p->element : "";
	const char *eq = strchr(bad, '=');
	int namelen = eq ? (int)(eq - bad) : (int)strlen(bad);

	if (p->short_name) {
		if (status == OPT_MISSING_VALUE)
			fmt_fprintf(stderr, "rtprobe: option '-%c' needs a value\n",
				    p->short_name);
		else
			fmt_fprintf(stderr, "rtprobe: unknown option '-%c' (rtprobe "
				    "%s takes long options only: see rtprobe %s "
				    "--help)\n", p->short_name, test, test);
	} else if (status == OPT_MISSING_VALUE) {
		fmt_fprintf(stderr, "rtprobe: option '%.*s' needs a value\n",
			    namelen, bad);
	} else if (status == OPT_UNWANTED_VALUE) {
		fmt_fprintf(stderr, "rtprobe: option '%.*s' takes no value\n",
			    namelen, bad);
	} else {
		fmt_fprintf(stderr, "rtprobe: unknown option '%.*s' (see rtprobe "
			    "%s --help)\n", namelen, bad, test);
	}
	exit(RTP_EXIT_USAGE);
}

/* Print one line "rtprobe: MESSAGE" and exit 2. */
__attribute__((noreturn, format(__printf__, 1, 2)))
static void common_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("rtprobe: ", stderr);
	va_start(ap, fmt);
	fmt_vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(RTP_EXIT_USAGE);
}

/* Sort the thresholds ascending and refuse duplicates. */
static void sort_thresholds(struct rtp_common *c)
{
	uint64_t v;
	int i, k;

	for (i = 1; i < c->nthresholds; i++) {
		v = c->thresholds_ns[i];
		for (k = i; k > 0 && c->thresholds_ns[k - 1] > v; k--)
			c->thresholds_ns[k] = c->thresholds_ns[k - 1];
		c->thresholds_ns[k] = v;
	}
	for (i = 1; i < c->nthresholds; i++)
		if (c->thresholds_ns[i] == c->thresholds_ns[i - 1])
			common_fail("--threshold: %llu ns given twice; give "
				    "each threshold once",
				    (unsigned long long)c->thresholds_ns[i]);
}

/* Resolve the measuring CPUs and one CPU per thread. */
static void resolve_cpus(struct rtp_common *c)
{
	char list[256];
	int ncpus, cpu, n = 0;

	if (c->cpus_given) {
		opt_cpulist_format(&c->cpus, list, sizeof(list));
		opt_cpulist_allowed("--cpus", list, &c->cpus);
	} else if (sched_getaffinity(0, sizeof(c->cpus), &c->cpus)) {
		fmt_fprintf(stderr, "rtprobe: cannot read the allowed CPUs "
			    "(sched_getaffinity: %s); give --cpus\n",
			    strerror(errno));
		exit(RTP_EXIT_ENV);
	}
	ncpus = CPU_COUNT(&c->cpus);
	opt_cpulist_format(&c->cpus, list, sizeof(list));
	if (c->threads_requested > ncpus)
		common_fail("--threads %d: only %d CPU%s in the measuring set "
			    "(%s); one thread per CPU: lower --threads or "
			    "widen --cpus", c->threads_requested, ncpus,
			    ncpus == 1 ? "" : "s", list);
	c->nthreads = c->threads_requested ? c->threads_requested : ncpus;
	for (cpu = 0; cpu < CPU_SETSIZE && n < c->nthreads; cpu++)
		if (CPU_ISSET((size_t)cpu, &c->cpus))
			c->cpu_list[n++] = cpu;
}

/* Validate combinations, resolve CPUs/threads; exits 2 on contradictions. */
void common_finish(struct rtp_common *c, const char *stray)
{
	struct timespec ts;
	uint64_t end;

	if (stray)
		common_fail("unexpected argument '%s': rtprobe %s takes only "
			    "options (see rtprobe %s --help)", stray,
			    c->test, c->test);
	if ((c->given & GIVEN(C_DURATION)) && (c->given & GIVEN(C_LOOPS)))
		common_fail("--duration and --loops exclude each other: give "
			    "one of them");
	if (c->given & GIVEN(C_LOOPS))
		c->duration_ns = 0;
	else if (!c->duration_ns)
		common_fail("no --duration or --loops given: say how long "
			    "to measure");
	if (__builtin_add_overflow(c->warmup_ns, c->duration_ns, &end))
		common_fail("--warmup plus --duration is too long");
	if (c->policy == POLICY_OTHER || c->policy == POLICY_DEADLINE) {
		if (c->given & GIVEN(C_PRIORITY))
			common_fail("--priority applies to --policy fifo or "
				    "rr only, not %s: drop --priority",
				    common_policy_name(c->policy));
		c->priority = 0;
	}
	sort_thresholds(c);
	if (c->on_spike_cmd && !c->nthresholds)
		common_fail("--on-spike needs at least one --threshold (the "
			    "command runs when the lowest is crossed)");
	if ((c->given & GIVEN(C_BREAK_ACTION)) && !c->break_on_ns)
		common_fail("--break-action needs --break-on");
	if ((c->given & COMMON_TRACE_BITS & ~COMMON_BIT(C_TRACE)) &&
	    !c->trace_mode)
		common_fail("--trace-* options need --trace=on or --trace=auto");
	if (c->trace_mode && c->break_on_ns)
		common_fail("--trace and --break-on both drive tracefs: give "
			    "one of them");
	if (!c->trace_threshold_ns)
		c->trace_threshold_ns = c->nthresholds ? c->thresholds_ns[0] :
					TRACE_DEFAULT_THRESHOLD_NS;
	if (!c->trace_margin_ns)
		c->trace_margin_ns = TRACE_DEFAULT_MARGIN_NS;
	if ((c->given & GIVEN(C_RAW_BUFFER)) && !c->raw_path)
		common_fail("--raw-buffer needs --raw FILE");
	if ((c->given & GIVEN(C_PMQOS_US)) && !c->pmqos)
		common_fail("--pmqos-us and --no-pmqos contradict each other: "
			    "give one of them");
	resolve_cpus(c);
	if (clock_gettime(c->clock, &ts)) {
		fmt_fprintf(stderr, "rtprobe: --clock %s: this kernel cannot read "
			    "it (clock_gettime: %s); use --clock monotonic\n",
			    c->clock_name, strerror(errno));
		exit(RTP_EXIT_ENV);
	}
}

/* Print the common options' help. */
void common_usage(FILE *f)
{
	opt_desc_usage(f, common_descs);
	fputs("  --help              this text\n", f);
}

int common_needs_cpus(const char *test, int needed, int have, int online,
		      const char *why, const char *remedy)
{
	if (online > have)
		fmt_fprintf(stderr, "rtprobe: %s: " NOT_APPLICABLE "needs %d "
			    "CPUs, its affinity allows %d of the board's %d "
			    "(%s); %s\n", test, needed, have, online, why, remedy);
	else
		fmt_fprintf(stderr, "rtprobe: %s: " NOT_APPLICABLE "needs %d "
			    "CPUs, the board has %d (%s); %s\n", test, needed,
			    have, why, remedy);
	return RTP_EXIT_ENV;
}

/* Name of a scheduling policy as written in the start record. */
const char *common_policy_name(enum rtp_policy p)
{
	if ((unsigned int)p < 4)
		return policy_names[p];
	return "unknown";
}
