/* SPDX-License-Identifier: MIT */
/*
 * load.h - shared machinery of `rtprobe load KIND` and `rtprobe hackbench`.
 *
 * load.c parses the options every kind shares (--rate, --cpus, --duration,
 * --workers, --output, --verbose), owns the signal handling (SIGINT/SIGTERM
 * blocked in every thread and child, received by the main thread through
 * sigtimedwait), writes the start, rate and result records, and gives the
 * kinds three helpers:
 *
 *   - struct load_shared: counters, the stop flag and the first error, in a
 *     MAP_SHARED page so that forked workers update the same memory;
 *   - struct load_workers: start workers as threads or as forked children
 *     (PR_SET_PDEATHSIG(SIGKILL) plus a getppid() check closing the race),
 *     optionally pinned, and join/reap them;
 *   - struct load_pacer: rate control against CLOCK_MONOTONIC in batches.
 *
 * A kind (load_cpu.c, load_sched.c, ...) is a const struct load_kind: its
 * options, how to validate and prepare them, how to start its workers, how
 * the achieved rate follows from its counters, and how to clean up.
 */
#ifndef RTP_LOAD_H
#define RTP_LOAD_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "json.h"
#include "opt.h"
#include "output.h"

#define LOAD_MAX_COUNTERS 6
#define LOAD_ERROR_LEN 200

/* Option ids of every load option (opt_next()'s); >= 256 to avoid chars. */
enum load_opt_id {
	LOPT_RATE = 256,
	LOPT_CPUS,
	LOPT_DURATION,
	LOPT_WORKERS,
	LOPT_OUTPUT,
	LOPT_VERBOSE,
	LOPT_JSON,
	LOPT_HELP,
	LOPT_PERIOD,
	LOPT_GROUPS,
	LOPT_FDS,
	LOPT_PIPE,
	LOPT_SOCKET,
	LOPT_THREADS,
	LOPT_PROCESSES,
	LOPT_SIZE,
	LOPT_BUFFER,
	LOPT_DIR,
	LOPT_WALK,
	LOPT_FILE_SIZE,
	LOPT_TARGET,
	LOPT_ALLOW_REMOTE,
	LOPT_TIMERS,
	LOPT_CC,
	LOPT_UNITS,
};

/* Memory shared by the main thread and every worker (thread or child). */
struct load_shared {
	atomic_int stop;                          /* raised by the main thread */
	atomic_int failed;                        /* first error claimed */
	atomic_uint_fast64_t counter[LOAD_MAX_COUNTERS];
	atomic_int done;                          /* workers finished (hackbench) */
	char error[LOAD_ERROR_LEN];               /* first worker error */
};

/* Options of one load run: the shared ones and every kind's own. */
struct load_cfg {
	const char *kind;
	double rate;               /* target in the kind's unit; 0 with --rate max */
	bool rate_max;
	bool rate_given;
	cpu_set_t cpus;
	char cpus_text[256];
	int cpu_list[CPU_SETSIZE]; /* resolved CPUs, ascending */
	int ncpus;
	uint64_t duration_ns;      /* 0: until SIGINT/SIGTERM */
	int workers;               /* 0: the kind's default */
	const char *output_path;
	bool verbose;
	bool json;                 /* --json: NDJSON on a terminal stdout too */
	/* cpu */
	uint64_t period_ns;
	/* sched */
	int groups;
	int fds;
	bool pipe;
	bool processes;
	bool processes_given;
	/* sched, net */
	uint64_t size;
	bool size_given;
	/* mem */
	uint64_t buffer_bytes;
	bool buffer_given;
	/* io */
	const char *dir;
	double walk_rate;          /* entries/s, 0: no walks */
	uint64_t file_size;
	/* net */
	const char *target;
	bool allow_remote;
	/* timer */
	int timers;
	/* build */
	const char *cc;
	int units;
};

/* Workers started as threads or forked children. */
struct load_workers {
	bool processes;
	int count;
	int cap;
	pid_t *pid;
	pthread_t *thread;
	bool *alive;               /* children not yet reaped */
	int failed;                /* workers that returned an error */
};

/* Paces operations at a rate against CLOCK_MONOTONIC. */
struct load_pacer {
	double ops_per_ns;         /* 0: flat out */
	double ns_per_op;
	double backlog_cap;        /* most operations due at once (catch-up) */
	uint64_t t0_ns;
	uint64_t done;             /* operations accounted since t0 */
	uint64_t min_batch;        /* wait until this many are due */
	uint64_t max_batch;        /* never hand out more at once */
};

struct load_run;

/* One kind of load. */
struct load_kind {
	const char *name;
	const char *unit;          /* unit of --rate and of "achieved" */
	const char *summary;
	double rate_lo, rate_hi;   /* accepted numeric --rate range */
	const char *const *counter_names; /* NULL-terminated, <= LOAD_MAX_COUNTERS */
	const struct opt_desc *options;   /* the kind's own, NULL-name ended */
	/* Print what --help says after the options (an example). */
	void (*usage)(FILE *f);
	/* Parse one of the kind's options; exits 2 on a bad value. */
	void (*handle)(struct load_cfg *cfg, int id, const char *arg);
	/* Check combinations and set defaults; exits 2 on bad input. */
	void (*finish)(struct load_cfg *cfg);
	/* Acquire resources (files, sockets, memory): 0 or an exit code with err. */
	int (*prepare)(struct load_run *r, char *err, size_t errlen);
	/* Write the kind's parameters into the start record's params. */
	void (*params)(struct json *j, const struct load_run *r);
	/* Start the workers: 0 or an exit code with err. */
	int (*start)(struct load_run *r, char *err, size_t errlen);
	/* Achieved rate from counter deltas over seconds. */
	double (*achieved)(const struct load_run *r, const uint64_t *delta,
			   double seconds);
	/* Stop raised: join the workers (kind's own waiting, may be NULL). */
	void (*stop)(struct load_run *r);
	/* Release everything prepare() acquired; runs on every exit path. */
	void (*cleanup)(struct load_run *r);
	/* Extra members of the result's data (may be NULL); runs after
	 * cleanup(), so it may use only cfg and the shared counters. */
	void (*result_data)(struct json *j, const struct load_run *r,
			    double seconds);
};

/* One running load. */
struct load_run {
	const struct load_kind *kind;
	struct load_cfg cfg;
	struct load_shared *shared;   /* MAP_SHARED */
	struct load_workers workers;
	void *state;                  /* the kind's own */
};

extern const struct load_kind load_kind_cpu;
extern const struct load_kind load_kind_sched;
extern const struct load_kind load_kind_mem;

/*
 * The mem load's buffer: --buffer when given, else 4 x the last-level cache
 * (32 MiB when it is unknown), raised to the 2 x 64 KiB chunks each of the
 * workers copies between.
 */
size_t load_mem_buffer_bytes(bool given, uint64_t given_bytes, bool llc_found,
			     uint64_t llc_bytes, int workers);
extern const struct load_kind load_kind_io;
extern const struct load_kind load_kind_net;
extern const struct load_kind load_kind_timer;
extern const struct load_kind load_kind_build;

/* Every load kind, NULL-terminated. */
extern const struct load_kind *const load_kinds[];

/* The options every load kind shares (--rate, --cpus, ...). */
extern const struct opt_desc load_common_options[];

/* Read CLOCK_MONOTONIC in nanoseconds. */
uint64_t load_now_ns(void);

/* Sleep until an absolute CLOCK_MONOTONIC time (restarts on EINTR). */
void load_sleep_until(uint64_t t_ns);

/* Map a zeroed struct load_shared shared with future children; NULL on error. */
struct load_shared *load_shared_create(void);
void load_shared_destroy(struct load_shared *sh);

/* Record a worker's error (the first one wins) and raise stop. */
__attribute__((format(__printf__, 2, 3)))
void load_fail(struct load_shared *sh, const char *fmt, ...);

/* Whether the stop flag is raised. */
bool load_stopping(const struct load_shared *sh);
/* True when SIGINT, SIGTERM or SIGHUP waits (blocked) for the main thread: a kind's
 * long preparation checks it to end at once when stopped before it runs. */
bool load_signal_pending(void);

/* Add n to counter i. */
void load_count(struct load_shared *sh, int i, uint64_t n);

/* Prepare an empty set of workers. */
void load_workers_init(struct load_workers *w, bool processes);

/*
 * Start fn(arg) as a thread or a forked child pinned to cpu (< 0: not
 * pinned).  A child returns fn's result as its exit status (NULL: 0) and
 * dies with its parent.  Forks only from a single-threaded process.
 * Returns 0 or -1 with err set.
 */
int load_workers_spawn(struct load_workers *w, void *(*fn)(void *), void *arg,
		       int cpu, char *err, size_t errlen);

/* Reap children that have ended, without blocking; returns those still alive. */
int load_workers_reap(struct load_workers *w);

/*
 * Wait for every worker to end; children still alive after grace_ns are
 * killed with SIGKILL.  Counts failed workers in w->failed.
 */
void load_workers_join(struct load_workers *w, uint64_t grace_ns);

/* Kill every live child with SIGKILL (threads are left alone). */
void load_workers_kill(struct load_workers *w);

/* Release the worker arrays. */
void load_workers_free(struct load_workers *w);

/* Start pacing rate_per_s operations (<= 0: flat out, max_batch at a time). */
void load_pacer_init(struct load_pacer *p, double rate_per_s,
		     uint64_t max_batch);

/*
 * Wait until operations are due and return how many to perform now
 * (1..max_batch), or 0 when stop was raised.  The caller reports what it did
 * with load_pacer_done().
 */
uint64_t load_pacer_next(struct load_pacer *p, const struct load_shared *sh);
void load_pacer_done(struct load_pacer *p, uint64_t n);

/*
 * Begin a start record in j: the members every load and hackbench share
 * (schema, type, tool, version, test, simulated, argv, clock).  argv
 * starts after "rtprobe".
 */
void load_start_header(struct json *j, const char *test, int argc,
		       char **argv);

/*
 * Check --dir of a kind that writes files (exits 2 naming the option when it is
 * missing, absent or not a directory).
 */
void load_require_dir(const char *kind, const char *dir);

/*
 * Make DIR/rtprobe-KIND-XXXXXX (path, pathlen) and open it (*dirfd, O_CLOEXEC).
 * 0, or an exit code with err set; path is "" when nothing was made.
 */
int load_make_workdir(const char *kind, const char *dir, char *path,
		      size_t pathlen, int *dirfd, char *err, size_t errlen);

/* Raise RLIMIT_NOFILE's soft limit to its hard limit (best effort). */
void load_raise_nofile(void);

/* Pin the calling thread to cpu; 0 or an errno value. */
int load_pin_self(int cpu);

#endif /* RTP_LOAD_H */
