// SPDX-License-Identifier: MIT
/*
 * load.c - `rtprobe load KIND`: options, records, signals, workers, pacing.
 *
 * The main thread parses the options, lets the kind acquire its resources,
 * writes the start record, starts the workers and then only waits: in
 * sigtimedwait() for SIGINT/SIGTERM/SIGHUP (blocked everywhere else), waking
 * at each second boundary to write a rate record from the shared counters.
 * On the end of --duration, a signal or a worker's error it raises the stop
 * flag, joins the workers, lets the kind clean up and writes the result.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fmt.h"
#include "footprint.h"
#include "clocksleep.h"
#include "commands.h"
#include "common.h"
#include "json.h"
#include "load.h"
#include "opt.h"
#include "rtprobe.h"
#include "sysinfo.h"

#define LOAD_MAX_OPTIONS 48
#define LOAD_POLL_NS (200 * NSEC_PER_MSEC)
#define LOAD_GRACE_NS (2 * NSEC_PER_SEC)

void load_require_dir(const char *kind, const char *dir)
{
	struct stat sb;

	if (!dir) {
		fmt_fprintf(stderr, "rtprobe: load %s: --dir DIR is required: the "
				"load writes only where you say\n", kind);
		exit(RTP_EXIT_USAGE);
	}
	if (stat(dir, &sb))
		opt_fail("--dir", dir, "%s", strerror(errno));
	if (!S_ISDIR(sb.st_mode))
		opt_fail("--dir", dir, "not a directory");
}

int load_make_workdir(const char *kind, const char *dir, char *path,
		      size_t pathlen, int *dirfd, char *err, size_t errlen)
{
	*dirfd = -1;
	if ((size_t)fmt_snprintf(path, pathlen, "%s/rtprobe-%s-XXXXXX", dir,
				 kind) >= pathlen) {
		path[0] = 0;
		fmt_snprintf(err, errlen, "--dir '%s': path too long", dir);
		return RTP_EXIT_USAGE;
	}
	if (!mkdtemp(path)) {
		fmt_snprintf(err, errlen, "--dir '%s': cannot create a directory "
			     "in it: %s", dir, strerror(errno));
		path[0] = 0;
		return RTP_EXIT_ENV;
	}
	*dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*dirfd < 0) {
		fmt_snprintf(err, errlen, "open %s: %s", path, strerror(errno));
		return RTP_EXIT_ENV;
	}
	return 0;
}

const struct load_kind *const load_kinds[] = {
	&load_kind_cpu, &load_kind_sched, &load_kind_mem,
	&load_kind_io, &load_kind_net, &load_kind_timer, &load_kind_build,
	NULL,
};

const struct opt_desc load_common_options[] = {
	{ .name = "rate", .id = LOPT_RATE, .type = OPT_NUMBER, .metavar = "R|max",
	  .help = HELP_LOAD_RATE },
	{ .name = "cpus", .id = LOPT_CPUS, .type = OPT_CPULIST,
	  .help = HELP_LOAD_CPUS },
	{ .name = "duration", .id = LOPT_DURATION, .type = OPT_DURATION,
	  .unit = "s",
	  .help = HELP_LOAD_DURATION },
	{ .name = "output", .id = LOPT_OUTPUT, .type = OPT_TEXT,
	  .metavar = "FILE", .help = HELP_LOAD_OUTPUT },
	{ .name = "verbose", .id = LOPT_VERBOSE, .type = OPT_FLAG,
	  .help = HELP_LOAD_VERBOSE },
	{ .name = "json", .id = LOPT_JSON, .type = OPT_FLAG,
	  .help = HELP_LOAD_JSON },
	{ .name = NULL },
};

static const struct opt_desc load_help_option[] = {
	{ .name = "help", .id = LOPT_HELP, .type = OPT_FLAG,
	  .help = HELP_LOAD_HELP },
	{ .name = NULL },
};

/* State of the main thread while a load runs. */
struct load_main {
	struct load_run *run;
	int argc;
	char **argv;
	struct output out;
	bool terminal;             /* stdout a terminal: no records, a summary */
	bool human;
	uint64_t t0_ns;
	uint64_t t0_unix_ns;
	uint64_t last_ns;
	uint64_t last[LOAD_MAX_COUNTERS];
	uint64_t windows;
	int ncounters;
	bool output_failed;
};

uint64_t load_now_ns(void)
{
	return clock_now_ns(CLOCK_MONOTONIC);
}

void load_sleep_until(uint64_t t_ns)
{
	(void)clock_sleep_until(CLOCK_MONOTONIC, t_ns);
}

struct load_shared *load_shared_create(void)
{
	void *p = mmap(NULL, sizeof(struct load_shared),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, sizeof(struct load_shared));
	return p;
}

void load_shared_destroy(struct load_shared *sh)
{
	if (sh)
		munmap(sh, sizeof(*sh));
}

void load_fail(struct load_shared *sh, const char *fmt, ...)
{
	int expected = 0;
	va_list ap;

	if (atomic_compare_exchange_strong(&sh->failed, &expected, 1)) {
		va_start(ap, fmt);
		fmt_vsnprintf(sh->error, sizeof(sh->error), fmt, ap);
		va_end(ap);
		atomic_store(&sh->failed, 2);
	}
	atomic_store(&sh->stop, 1);
}

bool load_stopping(const struct load_shared *sh)
{
	return atomic_load_explicit(&sh->stop, memory_order_relaxed) != 0;
}

bool load_signal_pending(void)
{
	sigset_t pending;

	if (sigpending(&pending))
		return false;
	return sigismember(&pending, SIGINT) == 1 ||
	       sigismember(&pending, SIGTERM) == 1 ||
	       sigismember(&pending, SIGHUP) == 1;
}

void load_count(struct load_shared *sh, int i, uint64_t n)
{
	atomic_fetch_add_explicit(&sh->counter[i], n, memory_order_relaxed);
}

void load_workers_init(struct load_workers *w, bool processes)
{
	memset(w, 0, sizeof(*w));
	w->processes = processes;
}

/* Grow the worker arrays to hold one more; 0 or -1. */
static int load_workers_grow(struct load_workers *w)
{
	int cap = w->cap ? w->cap * 2 : 16;
	pid_t *pid;
	pthread_t *thread;
	bool *alive;

	if (w->count < w->cap)
		return 0;
	pid = realloc(w->pid, (size_t)cap * sizeof(*pid));
	if (!pid)
		return -1;
	w->pid = pid;
	thread = realloc(w->thread, (size_t)cap * sizeof(*thread));
	if (!thread)
		return -1;
	w->thread = thread;
	alive = realloc(w->alive, (size_t)cap * sizeof(*alive));
	if (!alive)
		return -1;
	w->alive = alive;
	w->cap = cap;
	return 0;
}

int load_pin_self(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int load_workers_spawn(struct load_workers *w, void *(*fn)(void *), void *arg,
		       int cpu, char *err, size_t errlen)
{
	pthread_attr_t attr;
	cpu_set_t set;
	pid_t parent, pid;
	int rc;

	if (load_workers_grow(w)) {
		fmt_snprintf(err, errlen, "out of memory for %d workers",
			     w->count + 1);
		return -1;
	}
	if (w->processes) {
		parent = getpid();
		pid = fork();
		if (pid < 0) {
			fmt_snprintf(err, errlen, "fork of worker %d: %s",
				     w->count, strerror(errno));
			return -1;
		}
		if (pid == 0) {
			/*
			 * Die with the parent.  If it died between fork() and
			 * prctl(), we were already reparented: getppid()
			 * no longer names it, so leave at once.
			 */
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
				_exit(1);
			if (cpu >= 0 && load_pin_self(cpu))
				_exit(1);
			_exit(fn(arg) ? 1 : 0);
		}
		w->pid[w->count] = pid;
		w->alive[w->count] = true;
		w->count++;
		return 0;
	}
	rc = pthread_attr_init(&attr);
	if (!rc)
		rc = pthread_attr_setstacksize(&attr, 256 * 1024);
	if (!rc)
		rc = pthread_create(&w->thread[w->count], &attr, fn, arg);
	pthread_attr_destroy(&attr);
	/* Pinned after creation: musl has no pthread_attr_setaffinity_np. */
	if (!rc && cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		rc = pthread_setaffinity_np(w->thread[w->count], sizeof(set),
					    &set);
		if (rc) {
			pthread_cancel(w->thread[w->count]);
			pthread_join(w->thread[w->count], NULL);
		}
	}
	if (rc) {
		fmt_snprintf(err, errlen, "thread for worker %d%s: %s", w->count,
			     cpu >= 0 ? " (pinned)" : "", strerror(rc));
		return -1;
	}
	w->alive[w->count] = true;
	w->count++;
	return 0;
}

/* Account a reaped child's wait status. */
static void load_workers_status(struct load_workers *w, int i, int status)
{
	w->alive[i] = false;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		w->failed++;
}

int load_workers_reap(struct load_workers *w)
{
	int i, status, alive = 0;
	pid_t pid;

	if (!w->processes)
		return 0;
	for (i = 0; i < w->count; i++) {
		if (!w->alive[i])
			continue;
		pid = waitpid(w->pid[i], &status, WNOHANG);
		if (pid == w->pid[i])
			load_workers_status(w, i, status);
		else if (pid < 0 && errno == ECHILD)
			w->alive[i] = false;
		else
			alive++;
	}
	return alive;
}

void load_workers_join(struct load_workers *w, uint64_t grace_ns)
{
	uint64_t deadline = load_now_ns() + grace_ns;
	void *ret;
	int i, status;

	if (!w->processes) {
		for (i = 0; i < w->count; i++) {
			if (!w->alive[i])
				continue;
			if (!pthread_join(w->thread[i], &ret) && ret)
				w->failed++;
			w->alive[i] = false;
		}
		return;
	}
	while (load_workers_reap(w) && load_now_ns() < deadline)
		load_sleep_until(load_now_ns() + 5 * NSEC_PER_MSEC);
	load_workers_kill(w);
	for (i = 0; i < w->count; i++) {
		if (!w->alive[i])
			continue;
		if (waitpid(w->pid[i], &status, 0) == w->pid[i])
			load_workers_status(w, i, status);
		w->alive[i] = false;
	}
}

void load_workers_kill(struct load_workers *w)
{
	int i;

	if (!w->processes)
		return;
	for (i = 0; i < w->count; i++)
		if (w->alive[i])
			kill(w->pid[i], SIGKILL);
}

void load_workers_free(struct load_workers *w)
{
	free(w->pid);
	free(w->thread);
	free(w->alive);
	w->pid = NULL;
	w->thread = NULL;
	w->alive = NULL;
	w->count = w->cap = 0;
}

void load_pacer_init(struct load_pacer *p, double rate_per_s,
		     uint64_t max_batch)
{
	p->ops_per_ns = rate_per_s > 0 ? rate_per_s / 1e9 : 0;
	p->ns_per_op = rate_per_s > 0 ? 1e9 / rate_per_s : 0;
	p->t0_ns = load_now_ns();
	p->done = 0;
	p->max_batch = max_batch ? max_batch : 1;
	/* wake about once a millisecond at most: batches of rate/1000 */
	p->min_batch = rate_per_s > 1000 ? (uint64_t)(rate_per_s / 1000) : 1;
	if (p->min_batch > p->max_batch)
		p->max_batch = p->min_batch;
	/*
	 * A worker that was starved catches up at most a quarter of a second
	 * of work, so that it does not burst for long; the rest is lost and
	 * shows as a lower achieved rate.
	 */
	p->backlog_cap = 0.25e9 * p->ops_per_ns + (double)p->max_batch;
}

uint64_t load_pacer_next(struct load_pacer *p, const struct load_shared *sh)
{
	double allowed, due;
	uint64_t now, wake;

	for (;;) {
		if (load_stopping(sh))
			return 0;
		if (p->ops_per_ns <= 0)
			return p->max_batch;
		now = load_now_ns();
		allowed = (double)(now - p->t0_ns) * p->ops_per_ns;
		due = allowed - (double)p->done;
		if (due > p->backlog_cap) {
			p->done = (uint64_t)(allowed - p->backlog_cap);
			due = p->backlog_cap;
		}
		if (due >= (double)p->min_batch)
			return due > (double)p->max_batch ? p->max_batch :
							    (uint64_t)due;
		wake = p->t0_ns + (uint64_t)((double)(p->done + p->min_batch) *
					     p->ns_per_op);
		if (wake > now + LOAD_POLL_NS / 2)
			wake = now + LOAD_POLL_NS / 2;
		load_sleep_until(wake);
	}
}

void load_pacer_done(struct load_pacer *p, uint64_t n)
{
	p->done += n;
}

void load_raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Print the usage of `rtprobe load` (kind NULL: the list of kinds). */
static void load_usage(FILE *f, const struct load_kind *kind)
{
	const struct load_kind *const *k;

	if (!kind) {
		fmt_fprintf(f,
			    "usage: rtprobe load KIND --rate R|max [--cpus LIST] "
			    "[--duration D] [--output FILE] [--verbose]\n\n"
			    "A standard load defined by the rate it must reach; "
			    "writes a start record,\none rate record a second "
			    "(achieved rate and counters) and a result.\n\nKinds:\n");
		for (k = load_kinds; *k; k++)
			fmt_fprintf(f, "  %-6s %s (--rate in %s)\n", (*k)->name,
				    (*k)->summary, (*k)->unit);
		fmt_fprintf(f, "\nSee rtprobe load KIND --help for each kind's "
			   "options; docs/loads.md for the definitions.\n");
		return;
	}
	fmt_fprintf(f,
		    "usage: rtprobe load %s --rate R|max [options]\n\n"
		    "%s; --rate in %s (%g..%g) or max.\n\nOptions:\n",
		    kind->name, kind->summary, kind->unit, kind->rate_lo,
		    kind->rate_hi);
	opt_desc_usage(f, load_common_options);
	opt_desc_usage(f, kind->options);
	opt_desc_usage(f, load_help_option);
	kind->usage(f);
	fmt_fprintf(f, "\nExit codes: 0 ran for --duration, 2 bad usage, "
		   "3 the load could not run, 4 interrupted.\n");
}

/* Find a kind by name; NULL if none. */
static const struct load_kind *load_find_kind(const char *name)
{
	const struct load_kind *const *k;

	for (k = load_kinds; *k; k++)
		if (!strcmp((*k)->name, name))
			return *k;
	return NULL;
}

/* Resolve the CPU list (default: all allowed) into cfg. */
static void load_resolve_cpus(struct load_cfg *cfg)
{
	int cpu;

	if (!CPU_COUNT(&cfg->cpus)) {
		if (sched_getaffinity(0, sizeof(cfg->cpus), &cfg->cpus)) {
			fmt_fprintf(stderr, "rtprobe: sched_getaffinity: %s\n",
				    strerror(errno));
			exit(RTP_EXIT_ENV);
		}
	}
	cfg->ncpus = 0;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &cfg->cpus))
			cfg->cpu_list[cfg->ncpus++] = cpu;
	opt_cpulist_format(&cfg->cpus, cfg->cpus_text, sizeof(cfg->cpus_text));
}

/* Parse argv (argv[0] = "load", argv[1] = KIND) into cfg; exits on errors. */
static const struct load_kind *load_parse(int argc, char **argv,
					  struct load_cfg *cfg)
{
	struct opt_long table[LOAD_MAX_OPTIONS];
	const struct load_kind *kind;
	struct opt_parser p;
	size_t n = 0;
	char what[32];
	int id;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		load_usage(argc < 2 ? stderr : stdout, NULL);
		exit(argc < 2 ? RTP_EXIT_USAGE : RTP_EXIT_OK);
	}
	kind = load_find_kind(argv[1]);
	if (!kind) {
		fmt_fprintf(stderr, "rtprobe: load: unknown kind '%s': use one of "
				"cpu sched mem io net timer\n", argv[1]);
		exit(RTP_EXIT_USAGE);
	}
	memset(cfg, 0, sizeof(*cfg));
	cfg->kind = kind->name;
	opt_desc_table(table, LOAD_MAX_OPTIONS, &n, load_common_options);
	opt_desc_table(table, LOAD_MAX_OPTIONS, &n, kind->options);
	opt_desc_table(table, LOAD_MAX_OPTIONS, &n, load_help_option);

	opt_check_args(argc - 1, argv + 1, table, NULL);
	opt_parser_init(&p, argc - 1, argv + 1, table, NULL);
	while ((id = opt_next(&p)) != OPT_END) {
		switch (id) {
		case LOPT_RATE:
			cfg->rate_given = true;
			if (!strcmp(p.value, "max")) {
				cfg->rate_max = true;
				cfg->rate = 0;
			} else {
				cfg->rate_max = false;
				cfg->rate = opt_double("--rate", p.value,
						       kind->rate_lo,
						       kind->rate_hi);
			}
			break;
		case LOPT_CPUS:
			opt_cpulist("--cpus", p.value, &cfg->cpus);
			opt_cpulist_allowed("--cpus", p.value, &cfg->cpus);
			break;
		case LOPT_DURATION:
			cfg->duration_ns = opt_duration("--duration", p.value,
							"s");
			if (!cfg->duration_ns)
				opt_fail("--duration", p.value,
					 "must be more than 0 (leave it out "
					 "to run until stopped)");
			break;
		case LOPT_WORKERS:
			cfg->workers = (int)opt_u64("--workers", p.value, 1,
						    4096);
			break;
		case LOPT_OUTPUT:
			cfg->output_path = p.value;
			break;
		case LOPT_VERBOSE:
			cfg->verbose = true;
			break;
		case LOPT_JSON:
			cfg->json = true;
			break;
		case LOPT_HELP:
			load_usage(stdout, kind);
			exit(RTP_EXIT_OK);
		case OPT_UNKNOWN:
		case OPT_MISSING_VALUE:
		case OPT_UNWANTED_VALUE:
			fmt_snprintf(what, sizeof(what), "load %s", kind->name);
			common_bad_option(what, &p, id);
		default:
			kind->handle(cfg, id, p.value);
			break;
		}
	}
	if (p.rest < argc - 1) {
		fmt_fprintf(stderr, "rtprobe: load %s: unexpected argument '%s' "
				"(see rtprobe load %s --help)\n",
			    kind->name, argv[p.rest + 1], kind->name);
		exit(RTP_EXIT_USAGE);
	}
	if (!cfg->rate_given) {
		fmt_fprintf(stderr, "rtprobe: load %s: --rate is required: a rate "
				"in %s (%g..%g) or max\n",
			    kind->name, kind->unit, kind->rate_lo, kind->rate_hi);
		exit(RTP_EXIT_USAGE);
	}
	load_resolve_cpus(cfg);
	kind->finish(cfg);
	return kind;
}

/* Write one record; a failed write ends the load. */
static void load_emit(struct load_main *m, struct json *j)
{
	if (m->terminal) {
		json_reset(j);
		return;
	}
	if (!output_emit(&m->out, j) && !m->output_failed) {
		/* output_close() prints the one line naming the file */
		m->output_failed = true;
		atomic_store(&m->run->shared->stop, 1);
	}
}

void load_start_header(struct json *j, const char *test, int argc,
		       char **argv)
{
	record_begin(j, "start");
	record_start_header(j, test, false, NULL, argc, argv);
	json_str(j, "clock", "monotonic");
}

/* Write the start record. */
static void load_write_start(struct load_main *m)
{
	const struct load_run *r = m->run;
	struct json j;

	json_init(&j);
	load_start_header(&j, "load", m->argc, m->argv);
	json_str(&j, "load", r->kind->name);
	json_u64(&j, "t0_ns", m->t0_ns);
	json_u64(&j, "t0_unix_ns", m->t0_unix_ns);
	json_u64(&j, "window_ns", NSEC_PER_SEC);
	json_begin_object(&j, "params");
	if (r->cfg.rate_max)
		json_null(&j, "rate");
	else
		json_double(&j, "rate", r->cfg.rate);
	json_bool(&j, "rate_max", r->cfg.rate_max);
	json_str(&j, "unit", r->kind->unit);
	json_str(&j, "cpus", r->cfg.cpus_text);
	if (r->cfg.duration_ns)
		json_u64(&j, "duration_ns", r->cfg.duration_ns);
	else
		json_null(&j, "duration_ns");
	json_i64(&j, "pid", (int64_t)getpid());
	json_i64(&j, "pgid", (int64_t)getpgrp());
	r->kind->params(&j, r);
	json_end_object(&j);
	json_begin_array(&j, "series");
	json_end_array(&j);
	sysinfo_write(&j, "sysinfo");
	json_end_object(&j);
	load_emit(m, &j);
	json_free(&j);
}

/* Number of counters the kind names. */
static int load_counter_count(const struct load_kind *kind)
{
	int n = 0;

	while (n < LOAD_MAX_COUNTERS && kind->counter_names[n])
		n++;
	return n;
}

/* Write a rate record for the window that ended at now. */
static void load_write_rate(struct load_main *m, uint64_t now)
{
	const struct load_run *r = m->run;
	uint64_t cur[LOAD_MAX_COUNTERS], delta[LOAD_MAX_COUNTERS];
	double seconds = (double)(now - m->last_ns) / 1e9, achieved;
	struct json j;
	int i;

	for (i = 0; i < m->ncounters; i++) {
		cur[i] = atomic_load(&r->shared->counter[i]);
		delta[i] = cur[i] - m->last[i];
		m->last[i] = cur[i];
	}
	achieved = seconds > 0 ? r->kind->achieved(r, delta, seconds) : 0;
	json_init(&j);
	record_begin(&j, "rate");
	json_str(&j, "load", r->kind->name);
	json_u64(&j, "index", m->windows);
	json_u64(&j, "t_ns", now - m->t0_ns);
	json_double(&j, "achieved", achieved);
	json_str(&j, "unit", r->kind->unit);
	json_begin_object(&j, "counters");
	for (i = 0; i < m->ncounters; i++)
		json_u64(&j, r->kind->counter_names[i], delta[i]);
	json_end_object(&j);
	json_end_object(&j);
	load_emit(m, &j);
	json_free(&j);
	if (m->human) {
		if (r->cfg.rate_max)
			fmt_fprintf(stderr, "load %s: %.1f %s (max)\n",
				    r->kind->name, achieved, r->kind->unit);
		else
			fmt_fprintf(stderr, "load %s: %.1f %s (target %g)\n",
				    r->kind->name, achieved, r->kind->unit,
				    r->cfg.rate);
	}
	m->last_ns = now;
	m->windows++;
}

/* The summary a terminal gets instead of the records (stderr). */
static void load_summary(const struct load_main *m, const uint64_t *total,
			 double seconds, const char *status, int exit_code,
			 const char *reason)
{
	const struct load_run *r = m->run;

	fmt_fprintf(stderr, "\nrtprobe load %s summary: ", r->kind->name);
	if (seconds > 0)
		fmt_fprintf(stderr, "achieved %.1f %s over %.1f s", r->kind->achieved(
			    r, total, seconds), r->kind->unit, seconds);
	else
		fmt_fprintf(stderr, "nothing achieved");
	if (r->cfg.rate_max)
		fmt_fprintf(stderr, " (--rate max)\n");
	else
		fmt_fprintf(stderr, " (target %g)\n", r->cfg.rate);
	fmt_fprintf(stderr, "status: %s%s%s (exit %d)\n", status, reason ? ": " : "",
		    reason ? reason : "", exit_code);
}

/* Write the result record. */
static void load_write_result(struct load_main *m, const char *status,
			      int exit_code, const char *reason, uint64_t end)
{
	const struct load_run *r = m->run;
	uint64_t total[LOAD_MAX_COUNTERS];
	double seconds = (double)(end - m->t0_ns) / 1e9;
	struct json j;
	int i;

	for (i = 0; i < m->ncounters; i++)
		total[i] = atomic_load(&r->shared->counter[i]);
	if (m->terminal)
		load_summary(m, total, seconds, status, exit_code, reason);
	json_init(&j);
	record_begin(&j, "result");
	json_str(&j, "test", "load");
	json_str(&j, "load", r->kind->name);
	json_str(&j, "status", status);
	json_i64(&j, "exit_code", exit_code);
	json_str(&j, "reason", reason);
	json_bool(&j, "simulated", false);
	/* --rate max has no numeric target: "target" is left out */
	if (!r->cfg.rate_max)
		json_double(&j, "target", r->cfg.rate);
	json_bool(&j, "rate_max", r->cfg.rate_max);
	if (seconds > 0)
		json_double(&j, "achieved",
			    r->kind->achieved(r, total, seconds));
	else
		json_null(&j, "achieved");
	json_str(&j, "unit", r->kind->unit);
	json_u64(&j, "elapsed_ns", end - m->t0_ns);
	footprint_write(&j);
	json_begin_array(&j, "series");
	json_end_array(&j);
	json_begin_array(&j, "verdicts");
	json_end_array(&j);
	json_begin_object(&j, "data");
	json_u64(&j, "windows", m->windows);
	json_begin_object(&j, "counters");
	for (i = 0; i < m->ncounters; i++)
		json_u64(&j, r->kind->counter_names[i], total[i]);
	json_end_object(&j);
	if (r->kind->result_data && seconds > 0)
		r->kind->result_data(&j, r, seconds);
	json_end_object(&j);
	json_end_object(&j);
	load_emit(m, &j);
	json_free(&j);
}

/* Put the load into its own process group unless it leads one already. */
static void load_own_group(void)
{
	if (getpgrp() != getpid() && setpgid(0, 0))
		fmt_fprintf(stderr, "rtprobe: load: setpgid: %s (the load stays "
				"in its parent's process group)\n",
			    strerror(errno));
}

/* Wait for signals and write rate records until the load must end. */
static int load_wait(struct load_main *m, const sigset_t *sigs,
		     const char **status, const char **reason)
{
	struct load_run *r = m->run;
	uint64_t now, next, wake, end;
	struct timespec ts;
	siginfo_t info;
	int sig;

	end = r->cfg.duration_ns ? m->t0_ns + r->cfg.duration_ns : UINT64_MAX;
	for (;;) {
		now = load_now_ns();
		next = m->t0_ns + (m->windows + 1) * NSEC_PER_SEC;
		if (now >= next && next <= end) {
			load_write_rate(m, now);
			continue;
		}
		if (now >= end)
			break;
		if (atomic_load(&r->shared->failed)) {
			*status = "error";
			*reason = r->shared->error;
			return RTP_EXIT_ENV;
		}
		if (m->output_failed) {
			*status = "error";
			*reason = "cannot write output";
			return RTP_EXIT_ENV;
		}
		if (r->workers.processes &&
		    load_workers_reap(&r->workers) < r->workers.count) {
			*status = "error";
			*reason = "a worker process ended unexpectedly";
			load_fail(r->shared, "%s", *reason);
			return RTP_EXIT_ENV;
		}
		wake = next < end ? next : end;
		if (wake > now + LOAD_POLL_NS)
			wake = now + LOAD_POLL_NS;
		ts.tv_sec = (time_t)((wake - now) / NSEC_PER_SEC);
		ts.tv_nsec = (long)((wake - now) % NSEC_PER_SEC);
		sig = sigtimedwait(sigs, &info, &ts);
		if (sig > 0) {
			*status = "interrupted";
			*reason = sig == SIGINT ? "SIGINT" :
				  sig == SIGTERM ? "SIGTERM" : "SIGHUP";
			return RTP_EXIT_INTERRUPTED;
		}
	}
	*status = "ok";
	*reason = NULL;
	return RTP_EXIT_OK;
}

/*
 * Name the load's threads "rtload-KIND" (its workers, threads or children,
 * inherit it), so that a trace names them as rtbench's load, not as rtprobe.
 */
static void load_name_self(const char *kind)
{
	char comm[16];

	fmt_snprintf(comm, sizeof(comm), "rtload-%s", kind);
	if (prctl(PR_SET_NAME, comm))
		fmt_fprintf(stderr, "rtprobe: load %s: prctl(PR_SET_NAME): %s "
			    "(traces will name it rtprobe)\n", kind,
			    strerror(errno));
}

int cmd_load(int argc, char **argv)
{
	struct load_run run;
	struct load_main m;
	struct timespec rt;
	const char *status = "ok", *reason = NULL;
	char err[LOAD_ERROR_LEN + 64] = "";
	sigset_t sigs;
	uint64_t end;
	int rc;

	memset(&run, 0, sizeof(run));
	run.kind = load_parse(argc, argv, &run.cfg);
	memset(&m, 0, sizeof(m));
	m.run = &run;
	m.argc = argc;
	m.argv = argv;
	m.human = run.cfg.verbose || isatty(STDERR_FILENO);
	m.ncounters = load_counter_count(run.kind);

	/* Signals reach only the main thread, through sigtimedwait. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* an ignored signal is discarded even while blocked: a shell starts
	 * background jobs with SIGINT ignored, and we must still see it */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	load_own_group();
	load_name_self(run.kind->name);
	if (sched_setaffinity(0, sizeof(run.cfg.cpus), &run.cfg.cpus)) {
		fmt_fprintf(stderr, "rtprobe: --cpus '%s': sched_setaffinity: %s\n",
			    run.cfg.cpus_text, strerror(errno));
		return RTP_EXIT_ENV;
	}
	run.shared = load_shared_create();
	if (!run.shared) {
		fmt_fprintf(stderr, "rtprobe: load: mmap of shared counters: %s\n",
			    strerror(errno));
		return RTP_EXIT_ENV;
	}
	rc = run.kind->prepare(&run, err, sizeof(err));
	if (rc) {
		fmt_fprintf(stderr, "rtprobe: load %s: %s\n", run.kind->name, err);
		run.kind->cleanup(&run);
		load_shared_destroy(run.shared);
		return rc;
	}
	m.terminal = output_is_terminal(run.cfg.output_path, run.cfg.json);
	rc = output_open(&m.out, "--output", run.cfg.output_path);
	if (rc) {
		run.kind->cleanup(&run);
		load_shared_destroy(run.shared);
		return rc;
	}
	m.t0_ns = load_now_ns();
	clock_gettime(CLOCK_REALTIME, &rt);
	m.t0_unix_ns = (uint64_t)rt.tv_sec * NSEC_PER_SEC +
		       (uint64_t)rt.tv_nsec;
	m.last_ns = m.t0_ns;
	load_write_start(&m);

	rc = run.kind->start(&run, err, sizeof(err));
	if (rc) {
		status = "error";
		reason = err;
		fmt_fprintf(stderr, "rtprobe: load %s: %s\n", run.kind->name, err);
	} else {
		rc = load_wait(&m, &sigs, &status, &reason);
	}
	atomic_store(&run.shared->stop, 1);
	end = load_now_ns();
	if (run.kind->stop)
		run.kind->stop(&run);
	load_workers_join(&run.workers, LOAD_GRACE_NS);
	if (!rc && atomic_load(&run.shared->failed)) {
		status = "error";
		reason = run.shared->error;
		rc = RTP_EXIT_ENV;
	}
	if (rc == RTP_EXIT_ENV && reason == run.shared->error)
		fmt_fprintf(stderr, "rtprobe: load %s: %s\n", run.kind->name,
			    reason);
	run.kind->cleanup(&run);
	load_write_result(&m, status, rc, reason, end);
	if (output_close(&m.out))
		rc = RTP_EXIT_ENV;
	load_workers_free(&run.workers);
	load_shared_destroy(run.shared);
	return rc;
}
