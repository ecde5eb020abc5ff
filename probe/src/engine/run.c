// SPDX-License-Identifier: MIT
/*
 * run.c - one measurement run: output, RT set-up, threads, collection
 * (see run.h for the life cycle, engine.h for the hand-over protocol).
 */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clocksleep.h"
#include "engine.h"
#include "hist.h"
#include "opt.h"
#include "rt.h"
#include "rtprobe.h"
#include "series.h"
#include "sysinfo.h"

#define RUN_MAX_VERDICTS 32
#define RUN_THREAD_STACK (128 * 1024)
#define RUN_RAW_CHUNK 4096
#define RUN_COLLECT_OFFSET_NS (20 * NSEC_PER_MSEC)
#define RUN_T0_AHEAD_NS (20 * NSEC_PER_MSEC)
#define RUN_CHILD_GRACE_NS (5 * NSEC_PER_SEC)

extern char **environ;

/* Collector-side totals of one series. */
struct run_series {
	struct series *s;
	char label[32];
	int cpu;
	bool claimed;              /* a thread was spawned for it */
	char setup_error[160];     /* its thread could not be set up */
	struct hist *hist;         /* measured samples */
	uint64_t count, min_ns, max_ns, sum_ns, overruns, early;
	uint64_t exceed[COMMON_MAX_THRESHOLDS];
	uint64_t w_count, w_min_ns, w_max_ns, w_sum_ns, w_overruns;
	uint64_t last_t_ns;        /* due time of the last measured sample */
	bool fresh;                /* a window arrived since the live line */
};

/* A spawned thread and what it runs. */
struct run_thread {
	struct run *run;
	struct run_series *rs;     /* series on the same CPU, if any */
	void *(*fn)(void *);
	void *arg;
	int cpu;
	enum rtp_policy policy;
	int priority;
	pthread_t tid;
	char error[160];
};

struct run_verdict {
	char name[96];
	bool pass;
	char detail[160];
};

struct run {
	const struct rtp_common *c;
	int argc;
	char **argv;
	run_json_fn params_fn, data_fn;
	void *params_ctx, *data_ctx;
	run_verdict_fn verdict_fn;
	void *verdict_ctx;

	struct run_series *series[COMMON_MAX_THREADS];
	int nseries;
	struct run_thread *threads[COMMON_MAX_THREADS + 8];
	int nthreads;

	atomic_int stop;
	atomic_int live;                 /* spawned threads still running */
	_Atomic(const char *) stop_why;  /* first stop reason */
	atomic_int break_taken;
	int break_series;                /* written by the break-on winner */
	uint64_t break_t_ns, break_latency_ns;
	int trace_on_fd, trace_marker_fd;
	const char *tracefs;

	pid_t pid;
	sigset_t sigs;
	int signo;                       /* signal that interrupted the run */
	bool began;
	struct rt_state rt;
	cpu_set_t collector_cpus;
	bool collector_pinned;

	FILE *out;
	char *tmp_path;
	bool out_failed;
	char out_error[160];

	FILE *raw;
	pthread_t raw_tid;
	bool raw_started;
	atomic_int raw_stop;
	uint64_t raw_records;
	char raw_error[160];

	uint64_t t0_ns, t0_unix_ns;
	bool live_line;

	pid_t child;
	uint64_t spike_runs, spike_skipped;

	struct run_verdict verdicts[RUN_MAX_VERDICTS];
	int nverdicts;
	struct json j;
};

/* Format ns as microseconds, without trailing zeros ("100us", "2.5us"). */
static void run_fmt_us(char *buf, size_t len, uint64_t ns)
{
	int n;

	if (ns % NSEC_PER_USEC == 0) {
		snprintf(buf, len, "%lluus",
			 (unsigned long long)(ns / NSEC_PER_USEC));
		return;
	}
	n = snprintf(buf, len, "%llu.%03llu",
		     (unsigned long long)(ns / NSEC_PER_USEC),
		     (unsigned long long)(ns % NSEC_PER_USEC));
	while (n > 0 && (size_t)n < len && buf[n - 1] == '0')
		buf[--n] = '\0';
	snprintf(buf + n, len - (size_t)n, "us");
}

struct run *run_create(const struct rtp_common *c, int argc, char **argv)
{
	struct run *r = calloc(1, sizeof(*r));

	if (!r) {
		fprintf(stderr, "rtprobe: out of memory creating the run\n");
		exit(RTP_EXIT_ENV);
	}
	r->c = c;
	r->argc = argc;
	r->argv = argv;
	r->trace_on_fd = -1;
	r->trace_marker_fd = -1;
	r->child = -1;
	r->rt.pmqos_fd = -1;
	atomic_init(&r->stop, 0);
	atomic_init(&r->live, 0);
	atomic_init(&r->stop_why, NULL);
	atomic_init(&r->break_taken, 0);
	atomic_init(&r->raw_stop, 0);
	json_init(&r->j);
	return r;
}

void run_set_params(struct run *r, run_json_fn fn, void *ctx)
{
	r->params_fn = fn;
	r->params_ctx = ctx;
}

void run_set_result_data(struct run *r, run_json_fn fn, void *ctx)
{
	r->data_fn = fn;
	r->data_ctx = ctx;
}

void run_set_verdicts(struct run *r, run_verdict_fn fn, void *ctx)
{
	r->verdict_fn = fn;
	r->verdict_ctx = ctx;
}

struct series *run_add_series(struct run *r, const char *label, int cpu)
{
	struct run_series *rs;

	if (r->nseries >= COMMON_MAX_THREADS) {
		fprintf(stderr, "rtprobe: too many series (at most %d)\n",
			COMMON_MAX_THREADS);
		exit(RTP_EXIT_USAGE);
	}
	rs = calloc(1, sizeof(*rs));
	if (rs)
		rs->hist = calloc(1, sizeof(*rs->hist));
	if (rs && rs->hist)
		rs->s = series_create(r, r->c, &r->stop, r->nseries, cpu);
	if (!rs || !rs->hist || !rs->s) {
		fprintf(stderr, "rtprobe: out of memory for series %d "
			"(lower --raw-buffer or --threads)\n", r->nseries);
		exit(RTP_EXIT_ENV);
	}
	snprintf(rs->label, sizeof(rs->label), "%s", label);
	rs->cpu = cpu;
	rs->min_ns = UINT64_MAX;
	rs->w_min_ns = UINT64_MAX;
	r->series[r->nseries++] = rs;
	return rs->s;
}

bool run_stopping(const struct run *r)
{
	return atomic_load_explicit(&r->stop, memory_order_relaxed);
}

void run_request_stop(struct run *r, const char *why)
{
	const char *expected = NULL;

	atomic_compare_exchange_strong(&r->stop_why, &expected, why);
	atomic_store_explicit(&r->stop, 1, memory_order_release);
}

uint64_t run_t0_ns(const struct run *r)
{
	return r->t0_ns;
}

uint64_t run_now_ns(const struct run *r)
{
	return clock_now_ns(r->c->clock);
}

const struct rtp_common *run_common(const struct run *r)
{
	return r->c;
}

void run_notify(struct run *r)
{
	kill(r->pid, SIGUSR1);
}

void run_break_hit(struct run *r, int series_index, uint64_t t_ns,
		   uint64_t latency_ns)
{
	char line[160];
	int n;

	if (atomic_exchange(&r->break_taken, 1))
		return;
	r->break_series = series_index;
	r->break_t_ns = t_ns;
	r->break_latency_ns = latency_ns;
	if (r->trace_marker_fd >= 0) {
		n = snprintf(line, sizeof(line), "rtprobe: break-on series %d "
			     "latency %llu ns at t %llu ns\n", series_index,
			     (unsigned long long)latency_ns,
			     (unsigned long long)t_ns);
		if (write(r->trace_marker_fd, line, (size_t)n) < 0)
			n = -1; /* tracing goes on being stopped below */
	}
	if (r->trace_on_fd >= 0 && write(r->trace_on_fd, "0", 1) < 0)
		n = -1;
	(void)n;
	if (!r->c->break_continue)
		run_request_stop(r, "break");
	run_notify(r);
}

/* Find tracefs and open tracing_on and trace_marker; 0 or exit 3 with a line. */
static int run_open_tracefs(struct run *r)
{
	static const char *const dirs[] = { "/sys/kernel/tracing",
					    "/sys/kernel/debug/tracing" };
	char path[96];
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/tracing_on", dirs[i]);
		if (access(path, F_OK) == 0)
			break;
	}
	if (i == sizeof(dirs) / sizeof(dirs[0])) {
		fprintf(stderr, "rtprobe: --break-on: tracefs not found at "
			"/sys/kernel/tracing or /sys/kernel/debug/tracing: "
			"mount it (mount -t tracefs nodev /sys/kernel/tracing) "
			"or drop --break-on\n");
		return RTP_EXIT_ENV;
	}
	r->tracefs = dirs[i];
	r->trace_on_fd = open(path, O_WRONLY | O_CLOEXEC);
	if (r->trace_on_fd < 0) {
		fprintf(stderr, "rtprobe: --break-on: cannot open %s: %s; run "
			"as root or drop --break-on\n", path, strerror(errno));
		return RTP_EXIT_ENV;
	}
	snprintf(path, sizeof(path), "%s/trace_marker", dirs[i]);
	r->trace_marker_fd = open(path, O_WRONLY | O_CLOEXEC);
	if (r->trace_marker_fd < 0) {
		fprintf(stderr, "rtprobe: --break-on: cannot open %s: %s; run "
			"as root or drop --break-on\n", path, strerror(errno));
		return RTP_EXIT_ENV;
	}
	return 0;
}

/* Open stdout or a temporary file next to --output; 0 or exit 2 with a line. */
static int run_open_output(struct run *r)
{
	const char *path = r->c->output_path;
	size_t len;
	int fd;

	if (!path) {
		r->out = stdout;
		return 0;
	}
	len = strlen(path) + 8;
	r->tmp_path = malloc(len);
	if (!r->tmp_path) {
		fprintf(stderr, "rtprobe: out of memory\n");
		return RTP_EXIT_ENV;
	}
	snprintf(r->tmp_path, len, "%s.XXXXXX", path);
	fd = mkostemp(r->tmp_path, O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "rtprobe: --output %s: cannot create a file "
			"there (%s); give a path in a writable directory\n",
			path, strerror(errno));
		free(r->tmp_path);
		r->tmp_path = NULL;
		return RTP_EXIT_USAGE;
	}
	fchmod(fd, 0644);
	r->out = fdopen(fd, "w");
	if (!r->out) {
		fprintf(stderr, "rtprobe: --output %s: %s\n", path,
			strerror(errno));
		close(fd);
		return RTP_EXIT_ENV;
	}
	return 0;
}

/* Store v little-endian in n bytes at p. */
static void run_put_le(unsigned char *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Record the first raw-file error. */
static void run_raw_fail(struct run *r, const char *what)
{
	if (!r->raw_error[0])
		snprintf(r->raw_error, sizeof(r->raw_error), "%s %s: %s",
			 what, r->c->raw_path, strerror(errno));
}

/* Open --raw FILE and write its header; 0 or exit 2 with a line. */
static int run_open_raw(struct run *r)
{
	unsigned char hdr[32];

	if (!r->c->raw_path)
		return 0;
	r->raw = fopen(r->c->raw_path, "wbe");
	if (!r->raw) {
		fprintf(stderr, "rtprobe: --raw %s: cannot create it (%s); "
			"give a path in a writable directory\n",
			r->c->raw_path, strerror(errno));
		return RTP_EXIT_USAGE;
	}
	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr, "RTPRAW01", 8);
	run_put_le(hdr + 8, 32, 4);
	run_put_le(hdr + 12, 24, 4);
	run_put_le(hdr + 16, r->t0_ns, 8);
	run_put_le(hdr + 24, (uint64_t)r->c->clock, 4);
	if (fwrite(hdr, sizeof(hdr), 1, r->raw) != 1)
		run_raw_fail(r, "write");
	return 0;
}

/* Drain every series' raw ring into the file once; returns records moved. */
static uint64_t run_raw_pass(struct run *r, struct series_raw *buf,
			     unsigned char *bytes)
{
	uint64_t moved = 0;
	unsigned int n, k;
	uint32_t flags;
	int i;

	for (i = 0; i < r->nseries; i++) {
		while ((n = series_raw_drain(r->series[i]->s, buf,
					     RUN_RAW_CHUNK)) > 0) {
			for (k = 0; k < n; k++) {
				unsigned char *p = bytes + 24 * k;

				flags = buf[k].t_ns < r->c->warmup_ns;
				run_put_le(p, buf[k].t_ns, 8);
				run_put_le(p + 8, (uint64_t)buf[k].latency_ns,
					   8);
				run_put_le(p + 16, (uint64_t)i, 4);
				run_put_le(p + 20, flags, 4);
			}
			if (!r->raw_error[0] &&
			    fwrite(bytes, 24, n, r->raw) != n)
				run_raw_fail(r, "write");
			if (!r->raw_error[0])
				r->raw_records += n;
			moved += n;
		}
	}
	return moved;
}

/* Raw writer thread: drain the rings every 10 ms until told to stop. */
static void *run_raw_thread(void *arg)
{
	struct timespec ts = { 0, 10 * (long)NSEC_PER_MSEC };
	struct run *r = arg;
	struct series_raw *buf;
	unsigned char *bytes;

	buf = malloc(RUN_RAW_CHUNK * sizeof(*buf));
	bytes = malloc(RUN_RAW_CHUNK * 24);
	if (!buf || !bytes) {
		errno = ENOMEM;
		run_raw_fail(r, "buffer for");
		free(buf);
		free(bytes);
		return NULL;
	}
	for (;;) {
		bool last = atomic_load(&r->raw_stop);

		if (!run_raw_pass(r, buf, bytes) && !last)
			nanosleep(&ts, NULL);
		if (last)
			break;
	}
	run_raw_pass(r, buf, bytes);
	free(buf);
	free(bytes);
	return NULL;
}

/* Pin the calling (collector) thread to the allowed CPUs no series measures. */
static void run_pin_collector(struct run *r)
{
	cpu_set_t allowed;
	int i;

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return;
	for (i = 0; i < r->nseries; i++)
		if (r->series[i]->cpu >= 0)
			CPU_CLR((size_t)r->series[i]->cpu, &allowed);
	if (!CPU_COUNT(&allowed))
		return;
	if (pthread_setaffinity_np(pthread_self(), sizeof(allowed),
				   &allowed) == 0) {
		r->collector_cpus = allowed;
		r->collector_pinned = true;
	}
}

/* Write one NDJSON record; a failed write stops the run. */
static void run_emit(struct run *r)
{
	if (json_emit(&r->j, r->out) == 0)
		return;
	if (!r->out_failed) {
		r->out_failed = true;
		snprintf(r->out_error, sizeof(r->out_error),
			 "writing %s: %s", r->c->output_path ?
			 r->c->output_path : "stdout", strerror(errno));
		run_request_stop(r, "error");
	}
}

/* Write the "common" object of the start record. */
static void run_write_common(struct run *r)
{
	const struct rtp_common *c = r->c;
	struct json *j = &r->j;
	char cpus[256];
	int i;

	opt_cpulist_format(&c->cpus, cpus, sizeof(cpus));
	json_begin_object(j, "common");
	json_str(j, "policy", common_policy_name(c->policy));
	json_u64(j, "priority", (uint64_t)c->priority);
	json_str(j, "cpus", cpus);
	json_u64(j, "threads", (uint64_t)c->nthreads);
	if (c->loops) {
		json_null(j, "duration_ns");
		json_u64(j, "loops", c->loops);
	} else {
		json_u64(j, "duration_ns", c->duration_ns);
		json_null(j, "loops");
	}
	json_u64(j, "warmup_ns", c->warmup_ns);
	json_begin_array(j, "thresholds_ns");
	for (i = 0; i < c->nthresholds; i++)
		json_u64(j, NULL, c->thresholds_ns[i]);
	json_end_array(j);
	json_u64(j, "worst_n", (uint64_t)c->worst_n);
	if (c->break_on_ns)
		json_u64(j, "break_on_ns", c->break_on_ns);
	else
		json_null(j, "break_on_ns");
	json_str(j, "break_action", c->break_continue ? "continue" : "stop");
	json_str(j, "on_spike", c->on_spike_cmd);
	json_str(j, "raw", c->raw_path);
	if (c->raw_path)
		json_u64(j, "raw_buffer", c->raw_buffer);
	else
		json_null(j, "raw_buffer");
	json_str(j, "output", c->output_path);
	json_bool(j, "verbose", c->verbose);
	json_end_object(j);
}

/* Write the start record. */
static void run_write_start(struct run *r)
{
	const struct rtp_common *c = r->c;
	struct json *j = &r->j;
	char cpus[256];
	int i;

	json_begin_object(j, NULL);
	json_str(j, "schema", RTPROBE_SCHEMA);
	json_str(j, "type", "start");
	json_str(j, "tool", "rtprobe");
	json_str(j, "version", RTPROBE_VERSION);
	json_str(j, "test", c->test);
	json_bool(j, "simulated", c->simulate);
	json_str(j, "simulate", c->simulate ? c->sim.text : NULL);
	json_begin_array(j, "argv");
	json_str(j, NULL, "rtprobe");
	for (i = 0; i < r->argc; i++)
		json_str(j, NULL, r->argv[i]);
	json_end_array(j);
	json_str(j, "clock", c->clock_name);
	json_u64(j, "t0_ns", r->t0_ns);
	json_u64(j, "t0_unix_ns", r->t0_unix_ns);
	json_str(j, "hist_layout", HIST_LAYOUT_NAME);
	json_u64(j, "window_ns", SERIES_WINDOW_NS);
	run_write_common(r);
	json_begin_object(j, "params");
	if (r->params_fn)
		r->params_fn(j, r->params_ctx);
	json_end_object(j);
	rt_write_state(j, "rt", c, &r->rt);
	if (r->collector_pinned) {
		opt_cpulist_format(&r->collector_cpus, cpus, sizeof(cpus));
		json_str(j, "collector_cpus", cpus);
	} else {
		json_null(j, "collector_cpus");
	}
	json_str(j, "tracefs", r->tracefs);
	json_begin_array(j, "series");
	for (i = 0; i < r->nseries; i++) {
		json_begin_object(j, NULL);
		json_u64(j, "index", (uint64_t)i);
		json_str(j, "label", r->series[i]->label);
		if (r->series[i]->cpu >= 0)
			json_i64(j, "cpu", r->series[i]->cpu);
		else
			json_null(j, "cpu");
		json_end_object(j);
	}
	json_end_array(j);
	sysinfo_write(j, "sysinfo");
	json_end_object(j);
	run_emit(r);
}

int run_begin(struct run *r)
{
	const struct rtp_common *c = r->c;
	char err[256];
	uint64_t now, unix_now;
	int rc;

	r->pid = getpid();
	sigemptyset(&r->sigs);
	sigaddset(&r->sigs, SIGINT);
	sigaddset(&r->sigs, SIGTERM);
	sigaddset(&r->sigs, SIGHUP);
	sigaddset(&r->sigs, SIGCHLD);
	sigaddset(&r->sigs, SIGUSR1);
	rc = pthread_sigmask(SIG_BLOCK, &r->sigs, NULL);
	if (rc) {
		fprintf(stderr, "rtprobe: blocking signals: %s\n",
			strerror(rc));
		return RTP_EXIT_ENV;
	}
	signal(SIGPIPE, SIG_IGN);
	r->live_line = c->verbose || isatty(STDERR_FILENO);
	if (c->break_on_ns && !c->simulate) {
		rc = run_open_tracefs(r);
		if (rc)
			return rc;
	}
	rc = rt_prepare(c, &r->rt, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "rtprobe: %s\n", err);
		return rc;
	}
	if (r->live_line && !c->simulate) {
		if (c->mlock && !r->rt.mlocked)
			fprintf(stderr, "rtprobe: warning: %s\n",
				r->rt.mlock_error);
		if (c->pmqos && r->rt.pmqos_fd < 0)
			fprintf(stderr, "rtprobe: warning: PM-QoS not held: "
				"%s\n", r->rt.pmqos_error);
	}
	rc = run_open_output(r);
	if (rc) {
		rt_release(&r->rt);
		return rc;
	}
	run_pin_collector(r);
	now = clock_now_ns(c->clock);
	unix_now = clock_now_ns(CLOCK_REALTIME);
	r->t0_ns = now + (c->simulate ? 0 : RUN_T0_AHEAD_NS);
	r->t0_unix_ns = unix_now + (r->t0_ns - now);
	rc = run_open_raw(r);
	if (!rc && r->raw) {
		rc = pthread_create(&r->raw_tid, NULL, run_raw_thread, r);
		if (rc) {
			fprintf(stderr, "rtprobe: --raw: cannot start the "
				"writer thread: %s\n", strerror(rc));
			rc = RTP_EXIT_ENV;
		} else {
			r->raw_started = true;
		}
	}
	if (rc) {
		if (r->tmp_path)
			unlink(r->tmp_path);
		rt_release(&r->rt);
		return rc;
	}
	run_write_start(r);
	r->began = true;
	return 0;
}

/* Thread wrapper: apply policy and pinning, run the test's body. */
static void *run_thread_main(void *arg)
{
	struct run_thread *t = arg;
	struct run *r = t->run;
	int rc;

	if (r->c->simulate) {
		rt_apply_self(r->c, POLICY_OTHER, 0, t->cpu, t->error,
			      sizeof(t->error));
		t->error[0] = '\0';
		rc = 0;
	} else {
		rc = rt_apply_self(r->c, t->policy, t->priority, t->cpu,
				   t->error, sizeof(t->error));
	}
	if (rc) {
		if (t->rs)
			snprintf(t->rs->setup_error,
				 sizeof(t->rs->setup_error), "%s", t->error);
		run_request_stop(r, "error");
	} else {
		t->fn(t->arg);
	}
	atomic_fetch_sub(&r->live, 1);
	run_notify(r);
	return NULL;
}

int run_spawn(struct run *r, void *(*fn)(void *), void *arg, int cpu,
	      enum rtp_policy policy, int priority)
{
	struct run_thread *t;
	pthread_attr_t attr;
	int i, rc;

	if (r->nthreads >= (int)(sizeof(r->threads) / sizeof(r->threads[0])))
		return EAGAIN;
	t = calloc(1, sizeof(*t));
	if (!t)
		return ENOMEM;
	t->run = r;
	t->fn = fn;
	t->arg = arg;
	t->cpu = cpu;
	t->policy = policy;
	t->priority = priority;
	for (i = 0; i < r->nseries; i++) {
		if (!r->series[i]->claimed && r->series[i]->cpu == cpu) {
			t->rs = r->series[i];
			t->rs->claimed = true;
			break;
		}
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, RUN_THREAD_STACK);
	/* The thread pins itself first thing (rt_apply_self): portable to musl. */
	atomic_fetch_add(&r->live, 1);
	rc = pthread_create(&t->tid, &attr, run_thread_main, t);
	pthread_attr_destroy(&attr);
	if (rc) {
		atomic_fetch_sub(&r->live, 1);
		snprintf(t->error, sizeof(t->error),
			 "cannot start a thread on CPU %d: %s", cpu,
			 strerror(rc));
		if (t->rs)
			snprintf(t->rs->setup_error,
				 sizeof(t->rs->setup_error), "%s", t->error);
		free(t);
		run_request_stop(r, "error");
		return rc;
	}
	r->threads[r->nthreads++] = t;
	return 0;
}

void run_add_verdict(struct run *r, const char *name, bool pass,
		     const char *detail)
{
	struct run_verdict *v;

	if (r->nverdicts >= RUN_MAX_VERDICTS)
		return;
	v = &r->verdicts[r->nverdicts++];
	snprintf(v->name, sizeof(v->name), "%s", name);
	v->pass = pass;
	snprintf(v->detail, sizeof(v->detail), "%s", detail ? detail : "");
}

/* Write min/max members, null when there is no sample. */
static void run_min_max(struct json *j, uint64_t count, uint64_t min_ns,
			uint64_t max_ns)
{
	if (count) {
		json_u64(j, "min_ns", min_ns);
		json_u64(j, "max_ns", max_ns);
	} else {
		json_null(j, "min_ns");
		json_null(j, "max_ns");
	}
}

/* Emit a taken window, add it to the totals and clear its histogram. */
static void run_take_window(struct run *r, struct run_series *rs, int idx,
			    const struct series_window *w, struct hist32 *h)
{
	struct json *j = &r->j;
	unsigned int b, b_first, b_last;
	int i;

	json_begin_object(j, NULL);
	json_str(j, "schema", RTPROBE_SCHEMA);
	json_str(j, "type", "window");
	json_u64(j, "series", (uint64_t)idx);
	json_u64(j, "index", w->index);
	json_bool(j, "warmup", w->warmup);
	json_u64(j, "start_ns", w->start_ns);
	json_u64(j, "end_ns", w->end_ns);
	json_u64(j, "count", w->count);
	run_min_max(j, w->count, w->min_ns, w->max_ns);
	json_u64(j, "sum_ns", w->sum_ns);
	json_u64(j, "overruns", w->overruns);
	json_u64(j, "early", w->early);
	json_begin_array(j, "exceed");
	for (i = 0; i < r->c->nthresholds; i++)
		json_u64(j, NULL, w->exceed[i]);
	json_end_array(j);
	json_begin_array(j, "hist");
	/* Only buckets between the window's min and max can be non-zero. */
	b_first = w->count ? hist_index(w->min_ns) : 1;
	b_last = w->count ? hist_index(w->max_ns) : 0;
	for (b = b_first; b <= b_last; b++) {
		if (!h->count[b])
			continue;
		json_pair_u64(j, b, h->count[b]);
		if (!w->warmup)
			rs->hist->count[b] += h->count[b];
		h->count[b] = 0;
	}
	json_end_array(j);
	json_end_object(j);
	run_emit(r);

	rs->fresh = true;
	if (w->warmup) {
		rs->w_count += w->count;
		rs->w_sum_ns += w->sum_ns;
		rs->w_overruns += w->overruns;
		if (w->count && w->min_ns < rs->w_min_ns)
			rs->w_min_ns = w->min_ns;
		if (w->count && w->max_ns > rs->w_max_ns)
			rs->w_max_ns = w->max_ns;
		return;
	}
	rs->count += w->count;
	rs->sum_ns += w->sum_ns;
	rs->overruns += w->overruns;
	rs->early += w->early;
	if (w->count && w->min_ns < rs->min_ns)
		rs->min_ns = w->min_ns;
	if (w->count && w->max_ns > rs->max_ns)
		rs->max_ns = w->max_ns;
	for (i = 0; i < r->c->nthresholds; i++)
		rs->exceed[i] += w->exceed[i];
	if (w->count && w->last_t_ns > rs->last_t_ns)
		rs->last_t_ns = w->last_t_ns;
}

/* Build "NAME=value" in buf for the on-spike environment. */
static char *run_env_entry(char *buf, size_t len, const char *name,
			   unsigned long long v)
{
	snprintf(buf, len, "%s=%llu", name, v);
	return buf;
}

/*
 * vfork + exec /bin/sh -c cmd: the child shares our memory until exec, so no
 * page of the measuring threads turns copy-on-write (after fork() their next
 * write would fault).  The child only makes syscalls before exec: default
 * signal mask and SIGPIPE, death with the parent, stdout onto stderr when our
 * NDJSON goes to stdout.
 */
static pid_t run_exec_child(char *const argv[], char *const envp[],
			    pid_t parent, int out_is_stdout)
{
	sigset_t none;
	pid_t pid;

	sigemptyset(&none);
	pid = vfork();
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		if (out_is_stdout)
			dup2(STDERR_FILENO, STDOUT_FILENO);
		execve("/bin/sh", argv, envp);
		_exit(127);
	}
	return pid;
}

/* Start --on-spike for one spike (one child at a time, the rest skipped). */
static void run_on_spike(struct run *r, int idx, const struct series_spike *sp)
{
	char e_series[48], e_lat[64], e_t[64];
	char *argv[] = { "sh", "-c", (char *)r->c->on_spike_cmd, NULL };
	char **envp;
	size_t n = 0, i, k = 0;
	pid_t pid;

	if (r->child > 0) {
		r->spike_skipped++;
		return;
	}
	while (environ && environ[n])
		n++;
	envp = calloc(n + 4, sizeof(*envp));
	if (!envp) {
		r->spike_skipped++;
		return;
	}
	/* Our own variables replace inherited ones of the same name. */
	for (i = 0; i < n; i++)
		if (strncmp(environ[i], "RTPROBE_SPIKE_", 14))
			envp[k++] = environ[i];
	envp[k++] = run_env_entry(e_series, sizeof(e_series),
				  "RTPROBE_SPIKE_SERIES", (unsigned)idx);
	envp[k++] = run_env_entry(e_lat, sizeof(e_lat),
				  "RTPROBE_SPIKE_LATENCY_NS", sp->latency_ns);
	envp[k++] = run_env_entry(e_t, sizeof(e_t), "RTPROBE_SPIKE_T_NS",
				  sp->t_ns);
	envp[k] = NULL;
	pid = run_exec_child(argv, envp, r->pid, r->out == stdout);
	free(envp);
	if (pid < 0) {
		r->spike_skipped++;
		return;
	}
	r->child = pid;
	r->spike_runs++;
}

/* Reap the on-spike child if it ended. */
static void run_reap(struct run *r)
{
	if (r->child > 0 && waitpid(r->child, NULL, WNOHANG) == r->child)
		r->child = -1;
}

/* Write a spike record (threshold_ns: the highest threshold crossed). */
static void run_take_spike(struct run *r, int idx,
			   const struct series_spike *sp)
{
	struct json *j = &r->j;
	uint64_t th = r->c->thresholds_ns[0];
	int i;

	for (i = 1; i < r->c->nthresholds; i++)
		if (sp->latency_ns >= r->c->thresholds_ns[i])
			th = r->c->thresholds_ns[i];
	json_begin_object(j, NULL);
	json_str(j, "schema", RTPROBE_SCHEMA);
	json_str(j, "type", "spike");
	json_u64(j, "series", (uint64_t)idx);
	json_u64(j, "t_ns", sp->t_ns);
	json_u64(j, "latency_ns", sp->latency_ns);
	json_u64(j, "threshold_ns", th);
	json_end_object(j);
	run_emit(r);
	if (r->c->on_spike_cmd)
		run_on_spike(r, idx, sp);
}

/* Print one live line per series that got a window since the last one. */
static void run_live(struct run *r)
{
	struct run_series *rs;
	bool warm;
	uint64_t n, sum, mn, mx, ov;
	int i;

	for (i = 0; i < r->nseries; i++) {
		rs = r->series[i];
		if (!rs->fresh)
			continue;
		rs->fresh = false;
		warm = rs->count == 0;
		n = warm ? rs->w_count : rs->count;
		sum = warm ? rs->w_sum_ns : rs->sum_ns;
		mn = warm ? rs->w_min_ns : rs->min_ns;
		mx = warm ? rs->w_max_ns : rs->max_ns;
		ov = warm ? rs->w_overruns : rs->overruns;
		if (!n)
			continue;
		fprintf(stderr, "rtprobe: %-6s %s n=%llu min %.3f avg %.3f "
			"max %.3f us overruns %llu\n", rs->label,
			warm ? "warm-up " : "measured",
			(unsigned long long)n, mn / 1e3,
			(double)sum / (double)n / 1e3, mx / 1e3,
			(unsigned long long)ov);
	}
}

/* Emit every published window and pending spike of every series. */
static void run_drain(struct run *r)
{
	struct series_window w;
	struct series_spike sp;
	struct hist32 *h;
	int i;

	for (i = 0; i < r->nseries; i++) {
		struct run_series *rs = r->series[i];

		while (series_pop_spike(rs->s, &sp))
			run_take_spike(r, i, &sp);
		while (series_take_window(rs->s, &w, &h)) {
			run_take_window(r, rs, i, &w, h);
			series_window_done(rs->s);
		}
		/* Spikes pushed while the window was written. */
		while (series_pop_spike(rs->s, &sp))
			run_take_spike(r, i, &sp);
	}
	if (r->live_line)
		run_live(r);
}

/* How long the collector may sleep before the next window boundary. */
static void run_timeout(const struct run *r, struct timespec *ts)
{
	uint64_t now, next, k;

	if (r->c->simulate) {
		ts->tv_sec = 0;
		ts->tv_nsec = 100 * (long)NSEC_PER_MSEC;
		return;
	}
	now = clock_now_ns(r->c->clock);
	next = r->t0_ns + RUN_COLLECT_OFFSET_NS;
	if (now >= next) {
		k = (now - next) / NSEC_PER_SEC + 1;
		next += k * NSEC_PER_SEC;
	}
	ts->tv_sec = (time_t)((next - now) / NSEC_PER_SEC);
	ts->tv_nsec = (long)((next - now) % NSEC_PER_SEC);
}

/* Wait for a signal or the next window boundary and act on it. */
static void run_wait(struct run *r)
{
	struct timespec ts;
	siginfo_t info;
	int sig;

	run_timeout(r, &ts);
	sig = sigtimedwait(&r->sigs, &info, &ts);
	if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
		if (!r->signo)
			r->signo = sig;
		run_request_stop(r, "interrupted");
	} else if (sig == SIGCHLD) {
		run_reap(r);
	}
}

/* Let a still running on-spike child finish (bounded), then kill it. */
static void run_wait_child(struct run *r)
{
	uint64_t deadline = clock_now_ns(CLOCK_MONOTONIC) + RUN_CHILD_GRACE_NS;
	struct timespec ts = { 0, 50 * (long)NSEC_PER_MSEC };
	siginfo_t info;

	while (r->child > 0 && clock_now_ns(CLOCK_MONOTONIC) < deadline) {
		sigtimedwait(&r->sigs, &info, &ts);
		run_reap(r);
	}
	if (r->child > 0) {
		kill(r->child, SIGKILL);
		waitpid(r->child, NULL, 0);
		r->child = -1;
	}
}

/* Add the verdict of each --threshold. */
static void run_threshold_verdicts(struct run *r)
{
	char name[96], detail[160], us[32];
	uint64_t n;
	int i, k;

	for (i = 0; i < r->c->nthresholds; i++) {
		n = 0;
		for (k = 0; k < r->nseries; k++)
			n += r->series[k]->exceed[i];
		run_fmt_us(us, sizeof(us), r->c->thresholds_ns[i]);
		snprintf(name, sizeof(name), "threshold %s", us);
		snprintf(detail, sizeof(detail), "%llu sample%s >= %s",
			 (unsigned long long)n, n == 1 ? "" : "s", us);
		run_add_verdict(r, name, n == 0, detail);
	}
}

/* Write one series of the result record. */
static void run_write_series_result(struct run *r, int idx)
{
	struct series_worst worst[COMMON_MAX_WORST];
	struct run_series *rs = r->series[idx];
	struct json *j = &r->j;
	const char *err;
	unsigned int b;
	int i, n;

	json_begin_object(j, NULL);
	json_u64(j, "index", (uint64_t)idx);
	json_str(j, "label", rs->label);
	if (rs->cpu >= 0)
		json_i64(j, "cpu", rs->cpu);
	else
		json_null(j, "cpu");
	json_u64(j, "count", rs->count);
	run_min_max(j, rs->count, rs->min_ns, rs->max_ns);
	json_u64(j, "sum_ns", rs->sum_ns);
	json_u64(j, "overruns", rs->overruns);
	json_u64(j, "early", rs->early);
	json_begin_array(j, "exceed");
	for (i = 0; i < r->c->nthresholds; i++) {
		json_begin_object(j, NULL);
		json_u64(j, "threshold_ns", r->c->thresholds_ns[i]);
		json_u64(j, "count", rs->exceed[i]);
		json_end_object(j);
	}
	json_end_array(j);
	n = series_worst_sorted(rs->s, worst, COMMON_MAX_WORST);
	json_begin_array(j, "worst");
	for (i = 0; i < n; i++) {
		json_begin_object(j, NULL);
		json_u64(j, "t_ns", worst[i].t_ns);
		json_u64(j, "latency_ns", worst[i].latency_ns);
		json_end_object(j);
	}
	json_end_array(j);
	json_begin_object(j, "warmup");
	json_u64(j, "count", rs->w_count);
	run_min_max(j, rs->w_count, rs->w_min_ns, rs->w_max_ns);
	json_u64(j, "sum_ns", rs->w_sum_ns);
	json_u64(j, "overruns", rs->w_overruns);
	json_end_object(j);
	json_begin_array(j, "hist");
	for (b = 0; b < HIST_BUCKETS; b++) {
		if (!rs->hist->count[b])
			continue;
		json_pair_u64(j, b, rs->hist->count[b]);
	}
	json_end_array(j);
	json_u64(j, "spikes_dropped", series_spikes_dropped(rs->s));
	json_u64(j, "raw_dropped", series_raw_dropped(rs->s));
	err = rs->setup_error[0] ? rs->setup_error : series_error(rs->s);
	json_str(j, "error", err);
	json_end_object(j);
}

/* Decide status, reason and exit code from how the run ended. */
static int run_status(struct run *r, const char **status, char *reason,
		      size_t len)
{
	const char *why = atomic_load(&r->stop_why);
	const char *err = NULL;
	int i;

	for (i = 0; i < r->nseries && !err; i++)
		err = r->series[i]->setup_error[0] ?
		      r->series[i]->setup_error : series_error(r->series[i]->s);
	for (i = 0; i < r->nthreads && !err; i++)
		if (r->threads[i]->error[0] && !r->c->simulate)
			err = r->threads[i]->error;
	if (err || r->out_failed || (why && !strcmp(why, "error"))) {
		*status = "error";
		snprintf(reason, len, "%s", err ? err : r->out_failed ?
			 r->out_error : "a measuring thread failed");
		return RTP_EXIT_ENV;
	}
	if (why && !strcmp(why, "interrupted")) {
		*status = "interrupted";
		snprintf(reason, len, "interrupted by %s",
			 r->signo ? strsignal(r->signo) : "a signal");
		return RTP_EXIT_INTERRUPTED;
	}
	if (why && !strcmp(why, "break")) {
		*status = "break";
		snprintf(reason, len, "--break-on: series %d had %llu ns at "
			 "t %llu ns", r->break_series,
			 (unsigned long long)r->break_latency_ns,
			 (unsigned long long)r->break_t_ns);
		return RTP_EXIT_FAIL;
	}
	for (i = 0; i < r->nverdicts; i++) {
		if (!r->verdicts[i].pass) {
			*status = "fail";
			snprintf(reason, len, "%s: %s", r->verdicts[i].name,
				 r->verdicts[i].detail);
			return RTP_EXIT_FAIL;
		}
	}
	*status = "ok";
	reason[0] = '\0';
	if (why && strcmp(why, "break"))
		snprintf(reason, len, "%s", why);
	return RTP_EXIT_OK;
}

/*
 * Time measured after warm-up: the duration when the run went to its end,
 * else up to the due time of the last measured sample (see docs/schema.md).
 */
static uint64_t run_measured_ns(const struct run *r, const char *status)
{
	uint64_t end = 0, m;
	int i;

	if (!r->c->loops && (!strcmp(status, "ok") || !strcmp(status, "fail")))
		return r->c->duration_ns;
	for (i = 0; i < r->nseries; i++)
		if (r->series[i]->count && r->series[i]->last_t_ns > end)
			end = r->series[i]->last_t_ns;
	m = end > r->c->warmup_ns ? end - r->c->warmup_ns : 0;
	if (!r->c->loops && m > r->c->duration_ns)
		m = r->c->duration_ns;
	return m;
}

/* Write the result record; returns the exit code. */
static int run_write_result(struct run *r, uint64_t elapsed_ns)
{
	struct json *j = &r->j;
	uint64_t raw_dropped = 0;
	const char *status;
	char reason[256];
	int rc, i;

	rc = run_status(r, &status, reason, sizeof(reason));
	json_begin_object(j, NULL);
	json_str(j, "schema", RTPROBE_SCHEMA);
	json_str(j, "type", "result");
	json_str(j, "test", r->c->test);
	json_str(j, "status", status);
	json_u64(j, "exit_code", (uint64_t)rc);
	json_str(j, "reason", reason[0] ? reason : NULL);
	json_bool(j, "simulated", r->c->simulate);
	json_u64(j, "elapsed_ns", elapsed_ns);
	json_u64(j, "measured_ns", run_measured_ns(r, status));
	json_begin_array(j, "series");
	for (i = 0; i < r->nseries; i++)
		run_write_series_result(r, i);
	json_end_array(j);
	json_begin_array(j, "verdicts");
	for (i = 0; i < r->nverdicts; i++) {
		json_begin_object(j, NULL);
		json_str(j, "name", r->verdicts[i].name);
		json_bool(j, "pass", r->verdicts[i].pass);
		json_str(j, "detail", r->verdicts[i].detail);
		json_end_object(j);
	}
	json_end_array(j);
	if (atomic_load(&r->break_taken)) {
		json_begin_object(j, "break");
		json_u64(j, "series", (uint64_t)r->break_series);
		json_u64(j, "t_ns", r->break_t_ns);
		json_u64(j, "latency_ns", r->break_latency_ns);
		json_bool(j, "tracing_stopped", r->trace_on_fd >= 0);
		json_end_object(j);
	} else {
		json_null(j, "break");
	}
	if (r->c->raw_path) {
		for (i = 0; i < r->nseries; i++)
			raw_dropped += series_raw_dropped(r->series[i]->s);
		json_begin_object(j, "raw");
		json_str(j, "path", r->c->raw_path);
		json_u64(j, "records", r->raw_records);
		json_u64(j, "dropped", raw_dropped);
		json_str(j, "error", r->raw_error[0] ? r->raw_error : NULL);
		json_end_object(j);
	} else {
		json_null(j, "raw");
	}
	json_begin_object(j, "on_spike");
	json_u64(j, "runs", r->spike_runs);
	json_u64(j, "skipped", r->spike_skipped);
	json_end_object(j);
	json_begin_object(j, "data");
	if (r->data_fn)
		r->data_fn(j, r->data_ctx);
	json_end_object(j);
	json_end_object(j);
	run_emit(r);
	/* An output failure found while writing the result changes nothing now. */
	return rc;
}

/* Close the raw file and the output (renaming the temporary file). */
static int run_close_outputs(struct run *r, int rc)
{
	if (r->raw && fclose(r->raw) && !r->raw_error[0])
		fprintf(stderr, "rtprobe: --raw %s: %s\n", r->c->raw_path,
			strerror(errno));
	r->raw = NULL;
	if (r->out == stdout) {
		fflush(stdout);
		return rc;
	}
	if (fflush(r->out) || fsync(fileno(r->out)) || fclose(r->out)) {
		fprintf(stderr, "rtprobe: --output %s: writing failed: %s; "
			"partial output kept in %s\n", r->c->output_path,
			strerror(errno), r->tmp_path);
		return RTP_EXIT_ENV;
	}
	r->out = NULL;
	if (rename(r->tmp_path, r->c->output_path)) {
		fprintf(stderr, "rtprobe: --output %s: rename from %s failed: "
			"%s\n", r->c->output_path, r->tmp_path,
			strerror(errno));
		return RTP_EXIT_ENV;
	}
	return rc;
}

/* Free everything the run owns. */
static void run_free(struct run *r)
{
	int i;

	for (i = 0; i < r->nseries; i++) {
		series_destroy(r->series[i]->s);
		free(r->series[i]->hist);
		free(r->series[i]);
	}
	for (i = 0; i < r->nthreads; i++)
		free(r->threads[i]);
	if (r->trace_on_fd >= 0)
		close(r->trace_on_fd);
	if (r->trace_marker_fd >= 0)
		close(r->trace_marker_fd);
	free(r->tmp_path);
	json_free(&r->j);
	free(r);
}

int run_finish(struct run *r)
{
	uint64_t elapsed;
	int i, rc;

	if (!r->began) {
		run_free(r);
		return RTP_EXIT_ENV;
	}
	while (atomic_load(&r->live) > 0) {
		run_wait(r);
		run_drain(r);
	}
	for (i = 0; i < r->nthreads; i++)
		pthread_join(r->threads[i]->tid, NULL);
	run_drain(r);
	elapsed = clock_now_ns(r->c->clock);
	elapsed = elapsed > r->t0_ns ? elapsed - r->t0_ns : 0;
	if (r->raw_started) {
		atomic_store(&r->raw_stop, 1);
		pthread_join(r->raw_tid, NULL);
	}
	run_wait_child(r);
	run_threshold_verdicts(r);
	if (r->verdict_fn)
		r->verdict_fn(r, r->verdict_ctx);
	rc = run_write_result(r, elapsed);
	rt_release(&r->rt);
	rc = run_close_outputs(r, rc);
	run_free(r);
	return rc;
}
