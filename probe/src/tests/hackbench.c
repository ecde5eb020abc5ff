// SPDX-License-Identifier: MIT
/*
 * hackbench.c - `rtprobe hackbench`: a scheduler benchmark in its own right.
 *
 * --groups groups, each of --fds receivers (one pipe or UNIX stream socket
 * pair each) and --fds senders.  Every sender writes --loops messages of
 * --datasize bytes to every receiver of its group; every receiver reads
 * loops x fds messages.  Workers are processes (default) or threads.  All
 * workers first report ready on a pipe and wait for the start (the parent
 * closes a second pipe, so they all see end of file at once); the time runs
 * from that start until the last worker has finished.  The parent then
 * prints "Time: S.SSS" on stderr, like the classic tool, and a result
 * record with elapsed_ns and messages on stdout.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fmt.h"
#include "footprint.h"
#include "common.h"
#include "fdio.h"
#include "json.h"
#include "load.h"
#include "opt.h"
#include "rtprobe.h"
#include "sysinfo.h"
#include "testdesc.h"

/* The benchmark's parameters. */
struct hb_cfg {
	int groups;
	int loops;
	uint64_t datasize;
	int fds;
	bool threads;
	bool pipe;
	bool verbose;
	bool json;             /* --json: NDJSON on a terminal stdout too */
	const char *output_path;
};

/* One sender or receiver. */
struct hb_task {
	struct hb_bench *hb;
	bool sender;
	int read_fd;           /* receiver */
	int *write_fds;        /* sender: its group's receivers */
};

/* Everything the workers share. */
struct hb_bench {
	struct hb_cfg cfg;
	struct load_shared *shared;
	int ready[2];          /* workers -> parent: one byte each */
	int wakeup[2];         /* parent closes [1]: start */
	int total_tasks;
	pthread_t main_thread;
	struct hb_task *task;
	int *chan;             /* groups x fds x {read, write} */
	int nchan;
};

static const struct opt_desc hb_options[] = {
	{ .name = "groups", .id = 'g', .short_name = 'g', .type = OPT_INTEGER,
	  .def = "10", .help = HELP_HACKBENCH_GROUPS },
	{ .name = "fds", .id = 'f', .short_name = 'f', .type = OPT_INTEGER,
	  .def = "20",
	  .help = HELP_HACKBENCH_FDS },
	{ .name = "loops", .id = 'l', .short_name = 'l', .type = OPT_INTEGER,
	  .def = "100",
	  .help = HELP_HACKBENCH_LOOPS },
	{ .name = "datasize", .id = 's', .short_name = 's',
	  .type = OPT_INTEGER, .def = "100", .metavar = "B",
	  .help = HELP_HACKBENCH_DATASIZE },
	{ .name = "processes", .id = 'P', .short_name = 'P', .type = OPT_FLAG,
	  .help = HELP_HACKBENCH_PROCESSES },
	{ .name = "threads", .id = 'T', .short_name = 'T', .type = OPT_FLAG,
	  .help = HELP_HACKBENCH_THREADS },
	{ .name = "pipe", .id = 'p', .short_name = 'p', .type = OPT_FLAG,
	  .help = HELP_HACKBENCH_PIPE },
	{ .name = "socket", .id = 'S', .type = OPT_FLAG,
	  .help = HELP_HACKBENCH_SOCKET },
	{ .name = "output", .id = 'o', .type = OPT_TEXT, .metavar = "FILE",
	  .help = HELP_HACKBENCH_OUTPUT },
	{ .name = "verbose", .id = 'v', .type = OPT_FLAG,
	  .help = HELP_HACKBENCH_VERBOSE },
	{ .name = "json", .id = 'j', .type = OPT_FLAG,
	  .help = HELP_HACKBENCH_JSON },
	{ .name = "help", .id = 'h', .short_name = 'h', .type = OPT_FLAG,
	  .help = HELP_HACKBENCH_HELP },
	{ .name = NULL },
};

/* Print the usage of `rtprobe hackbench`. */
static void hb_usage(FILE *f)
{
	fmt_fprintf(f,
		    "usage: rtprobe hackbench [options]\n\n"
		    "Scheduler benchmark after hackbench: groups of senders and "
		    "receivers pass\nmessages; prints \"Time: S.SSS\" on stderr and "
		    "NDJSON (start, result) on stdout.\n\n");
	opt_desc_usage(f, hb_options);
	fmt_fprintf(f, "\nExample: rtprobe hackbench -g 4 -l 200 --pipe --threads\n"
		    "Exit codes: 0 ran, 2 bad usage, 3 could not run (fds, "
		    "fork), 4 interrupted.\n");
}

/* Parse argv into cfg; exits 2 on bad input. */
static void hb_parse(int argc, char **argv, struct hb_cfg *cfg)
{
	struct opt_long table[16];
	struct opt_parser p;
	size_t n = 0;
	int id;

	memset(cfg, 0, sizeof(*cfg));
	cfg->groups = 10;
	cfg->loops = 100;
	cfg->datasize = 100;
	cfg->fds = 20;
	opt_desc_table(table, sizeof(table) / sizeof(table[0]), &n,
		       hb_options);
	opt_check_args(argc, argv, table, NULL);
	opt_parser_init(&p, argc, argv, table, "g:l:s:f:TPph");
	while ((id = opt_next(&p)) != OPT_END) {
		switch (id) {
		case 'g':
			cfg->groups = (int)opt_u64("--groups", p.value, 1,
						   10000);
			break;
		case 'l':
			cfg->loops = (int)opt_u64("--loops", p.value, 1,
						  100000000);
			break;
		case 's':
			cfg->datasize = opt_u64("--datasize", p.value, 1,
						1 << 20);
			break;
		case 'f':
			cfg->fds = (int)opt_u64("--fds", p.value, 1, 1000);
			break;
		case 'T':
			cfg->threads = true;
			break;
		case 'P':
			cfg->threads = false;
			break;
		case 'p':
			cfg->pipe = true;
			break;
		case 'S':
			cfg->pipe = false;
			break;
		case 'o':
			cfg->output_path = p.value;
			break;
		case 'v':
			cfg->verbose = true;
			break;
		case 'j':
			cfg->json = true;
			break;
		case 'h':
			hb_usage(stdout);
			exit(RTP_EXIT_OK);
		default:
			common_bad_option("hackbench", &p, id);
		}
	}
	if (p.rest < argc) {
		fmt_fprintf(stderr, "rtprobe: hackbench: unexpected argument '%s' "
				"(see rtprobe hackbench --help)\n",
			    argv[p.rest]);
		exit(RTP_EXIT_USAGE);
	}
}

/* Report ready and wait for the start; 0 or -1 (error recorded). */
static int hb_wait_start(struct hb_bench *hb)
{
	char byte = 0;

	if (fdio_write_full(hb->ready[1], &byte, 1)) {
		load_fail(hb->shared, "ready pipe: %s", strerror(errno));
		return -1;
	}
	/* the start is a byte or the write end closing: either wakes us */
	(void)fdio_read_full(hb->wakeup[0], &byte, 1);
	return 0;
}

/* Read loops x fds messages into buf (datasize bytes). */
static int hb_receive(struct hb_task *t, char *buf)
{
	struct hb_bench *hb = t->hb;
	uint64_t left = (uint64_t)hb->cfg.loops * (uint64_t)hb->cfg.fds *
			hb->cfg.datasize;
	ssize_t n;

	while (left) {
		n = read(t->read_fd, buf, left < hb->cfg.datasize ?
				(size_t)left : hb->cfg.datasize);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			load_fail(hb->shared, "receiver read: %s",
				  n ? strerror(errno) : "end of file");
			return -1;
		}
		left -= (uint64_t)n;
	}
	return 0;
}

/* Write loops messages of buf to each receiver of the group, in turn. */
static int hb_send(struct hb_task *t, const char *buf)
{
	struct hb_bench *hb = t->hb;
	int loop, j;

	for (loop = 0; loop < hb->cfg.loops; loop++) {
		for (j = 0; j < hb->cfg.fds; j++) {
			if (fdio_write_full(t->write_fds[j], buf,
					    hb->cfg.datasize)) {
				load_fail(hb->shared, "sender write: %s",
					  strerror(errno));
				return -1;
			}
		}
	}
	return 0;
}

/* Entry point of a worker (thread or child). */
static void *hb_task_main(void *arg)
{
	struct hb_task *t = arg;
	struct hb_bench *hb = t->hb;
	char *buf;
	int rc;

	/* a child holds a copy of the start pipe's write end: drop it */
	if (!hb->cfg.threads)
		close(hb->wakeup[1]);
	/* allocated and faulted in before the start: not part of the time */
	buf = malloc(hb->cfg.datasize);
	if (!buf) {
		load_fail(hb->shared, "%s: out of memory",
			  t->sender ? "sender" : "receiver");
		return (void *)1;
	}
	memset(buf, 0, hb->cfg.datasize);
	if (hb_wait_start(hb)) {
		free(buf);
		return (void *)1;
	}
	rc = t->sender ? hb_send(t, buf) : hb_receive(t, buf);
	free(buf);
	if (atomic_fetch_add(&hb->shared->done, 1) + 1 == hb->total_tasks &&
	    hb->cfg.threads)
		pthread_kill(hb->main_thread, SIGUSR1);
	return rc ? (void *)1 : NULL;
}

/* Create one group's channels and start its receivers and senders. */
static int hb_start_group(struct hb_bench *hb, struct load_workers *w, int g,
			  char *err, size_t errlen)
{
	int fds = hb->cfg.fds, i, pair[2];
	int *chan = &hb->chan[g * fds * 2];
	int *write_fds = malloc((size_t)fds * sizeof(int));
	struct hb_task *t;

	if (!write_fds) {
		fmt_snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < fds; i++) {
		if (hb->cfg.pipe ? pipe(pair) :
		    socketpair(AF_UNIX, SOCK_STREAM, 0, pair)) {
			fmt_snprintf(err, errlen, "%s: %s%s",
				     hb->cfg.pipe ? "pipe" : "socketpair",
				     strerror(errno), errno == EMFILE ?
				     " (raise ulimit -n, or fewer --groups/--fds "
				     "with --threads)" : "");
			free(write_fds);
			return -1;
		}
		chan[2 * i] = pair[0];
		chan[2 * i + 1] = pair[1];
		write_fds[i] = pair[1];
		hb->nchan = g * fds + i + 1;
	}
	for (i = 0; i < 2 * fds; i++) {
		t = &hb->task[g * fds * 2 + i];
		t->hb = hb;
		t->sender = i >= fds;
		t->read_fd = chan[2 * (i % fds)];
		t->write_fds = write_fds;
		if (load_workers_spawn(w, hb_task_main, t, -1, err, errlen))
			return -1;      /* write_fds freed at exit */
	}
	if (!hb->cfg.threads) {
		/* the children hold their copies: the parent needs none */
		for (i = 0; i < 2 * fds; i++)
			close(chan[i]);
		free(write_fds);
	}
	return 0;
}

/* Close the channels and free what the parent still holds (thread mode). */
static void hb_release(struct hb_bench *hb)
{
	int i;

	if (hb->cfg.threads) {
		for (i = 0; i < 2 * hb->nchan; i++)
			close(hb->chan[i]);
		for (i = 0; i * 2 * hb->cfg.fds < hb->total_tasks; i++)
			free(hb->task[i * 2 * hb->cfg.fds].write_fds);
	}
	close(hb->ready[0]);
	close(hb->ready[1]);
	close(hb->wakeup[0]);
	free(hb->task);
	free(hb->chan);
	load_shared_destroy(hb->shared);
}

/* Write the start record. */
static void hb_write_start(struct output *out, const struct hb_bench *hb,
			   int argc, char **argv)
{
	struct json j;

	json_init(&j);
	load_start_header(&j, "hackbench", argc, argv);
	json_begin_object(&j, "params");
	json_i64(&j, "groups", hb->cfg.groups);
	json_i64(&j, "fds", hb->cfg.fds);
	json_i64(&j, "loops", hb->cfg.loops);
	json_u64(&j, "datasize", hb->cfg.datasize);
	json_str(&j, "mode", hb->cfg.threads ? "threads" : "processes");
	json_str(&j, "transport", hb->cfg.pipe ? "pipe" : "socket");
	json_i64(&j, "tasks", hb->total_tasks);
	json_end_object(&j);
	json_begin_array(&j, "series");
	json_end_array(&j);
	sysinfo_write(&j, "sysinfo");
	json_end_object(&j);
	output_emit(out, &j); /* a failure: output_close() says so */
	json_free(&j);
}

/* Write the result record; 0 or -1 (output_close() reports it). */
static int hb_write_result(struct output *out, const struct hb_bench *hb,
			   const char *status, int exit_code,
			   const char *reason, uint64_t elapsed_ns)
{
	uint64_t messages = (uint64_t)hb->cfg.groups * hb->cfg.fds *
			    hb->cfg.fds * hb->cfg.loops;
	struct json j;
	int rc;

	json_init(&j);
	record_begin(&j, "result");
	json_str(&j, "test", "hackbench");
	json_str(&j, "status", status);
	json_i64(&j, "exit_code", exit_code);
	json_str(&j, "reason", reason);
	json_bool(&j, "simulated", false);
	json_u64(&j, "elapsed_ns", elapsed_ns);
	footprint_write(&j);
	json_begin_array(&j, "series");
	json_end_array(&j);
	json_begin_array(&j, "verdicts");
	json_end_array(&j);
	json_begin_object(&j, "data");
	json_u64(&j, "elapsed_ns", elapsed_ns);
	json_u64(&j, "messages", messages);
	json_u64(&j, "bytes", messages * hb->cfg.datasize);
	json_i64(&j, "tasks", hb->total_tasks);
	if (elapsed_ns && !strcmp(status, "ok"))
		json_double(&j, "messages_per_s",
			    (double)messages * 1e9 / (double)elapsed_ns);
	else
		json_null(&j, "messages_per_s");
	json_end_object(&j);
	json_end_object(&j);
	rc = output_emit(out, &j) ? 0 : -1;
	json_free(&j);
	return rc;
}

/* Wait for every worker to finish, or a signal; 0, or the signal number. */
static int hb_wait_done(struct hb_bench *hb, struct load_workers *w,
			const sigset_t *sigs)
{
	struct timespec ts = { .tv_sec = 1, .tv_nsec = 0 };
	siginfo_t info;
	int sig;

	for (;;) {
		if (w->processes ? load_workers_reap(w) == 0 :
		    atomic_load(&hb->shared->done) == hb->total_tasks)
			return 0;
		sig = sigtimedwait(sigs, &info, &ts);
		if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
			return sig;
	}
}

static int hb_main(int argc, char **argv)
{
	struct hb_bench hb;
	struct load_workers w;
	const char *status = "ok", *reason = NULL;
	char err[LOAD_ERROR_LEN + 64] = "";
	uint64_t start = 0, end = 0;
	bool human;
	sigset_t sigs;
	struct output out;
	int g, n, rc = RTP_EXIT_OK, sig;
	char byte;

	memset(&hb, 0, sizeof(hb));
	hb_parse(argc, argv, &hb.cfg);
	human = hb.cfg.verbose || isatty(STDERR_FILENO);
	hb.total_tasks = 2 * hb.cfg.groups * hb.cfg.fds;
	hb.main_thread = pthread_self();

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGCHLD);
	sigaddset(&sigs, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* an ignored signal is discarded even while blocked: a shell starts
	 * background jobs with SIGINT ignored, and we must still see it */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	load_raise_nofile();

	hb.shared = load_shared_create();
	hb.task = calloc((size_t)hb.total_tasks, sizeof(*hb.task));
	hb.chan = malloc((size_t)hb.total_tasks * sizeof(int));
	if (!hb.shared || !hb.task || !hb.chan ||
	    pipe(hb.ready) || pipe(hb.wakeup)) {
		fmt_fprintf(stderr, "rtprobe: hackbench: setting up %d tasks: %s\n",
			    hb.total_tasks, strerror(errno));
		return RTP_EXIT_ENV;
	}
	/* Opened once set-up succeeded: a failure above leaves no temp file. */
	rc = output_open(&out, "--output", hb.cfg.output_path);
	if (rc)
		return rc;
	/* a terminal gets the Time: line, not the records */
	out.discard = output_is_terminal(hb.cfg.output_path, hb.cfg.json);
	hb_write_start(&out, &hb, argc, argv);
	if (human)
		fmt_fprintf(stderr, "Running in %s mode with %d groups using %d "
				"file descriptors each (== %d tasks)\n"
				"Each sender will pass %d messages of %llu "
				"bytes\n",
			    hb.cfg.threads ? "threaded" : "process",
			    hb.cfg.groups, 2 * hb.cfg.fds, hb.total_tasks,
			    hb.cfg.loops, (unsigned long long)hb.cfg.datasize);

	load_workers_init(&w, !hb.cfg.threads);
	for (g = 0; g < hb.cfg.groups; g++) {
		if (hb_start_group(&hb, &w, g, err, sizeof(err))) {
			rc = RTP_EXIT_ENV;
			break;
		}
	}
	/* every started worker reports ready; then all start at once */
	for (n = 0; !rc && n < w.count;) {
		ssize_t got = read(hb.ready[0], &byte, 1);

		if (got == 1)
			n++;
		else if (got < 0 && errno != EINTR)
			break;
	}
	start = load_now_ns();
	close(hb.wakeup[1]);
	if (rc) {
		load_workers_kill(&w);
	} else {
		sig = hb_wait_done(&hb, &w, &sigs);
		end = load_now_ns();
		if (sig) {
			status = "interrupted";
			reason = sig == SIGINT ? "SIGINT" :
				 sig == SIGTERM ? "SIGTERM" : "SIGHUP";
			rc = RTP_EXIT_INTERRUPTED;
			load_workers_kill(&w);
		}
	}
	/* threads blocked in I/O cannot be stopped: exiting ends them */
	if (rc != RTP_EXIT_INTERRUPTED || w.processes)
		load_workers_join(&w, 0);
	else
		w.count = 0;
	if (!rc && (w.failed || atomic_load(&hb.shared->failed))) {
		rc = RTP_EXIT_ENV;
		fmt_snprintf(err, sizeof(err), "%s", hb.shared->error[0] ?
			     hb.shared->error : "a worker failed");
	}
	if (rc == RTP_EXIT_ENV) {
		status = "error";
		reason = err;
		fmt_fprintf(stderr, "rtprobe: hackbench: %s\n", err);
	} else if (rc == RTP_EXIT_OK) {
		fmt_fprintf(stderr, "Time: %.3f\n", (double)(end - start) / 1e9);
	}
	hb_write_result(&out, &hb, status, rc, reason,
			end > start ? end - start : 0);
	if (output_close(&out))
		rc = RTP_EXIT_ENV;
	if (w.count)
		hb_release(&hb);
	load_workers_free(&w);
	return rc;
}

const struct test_desc test_hackbench = {
	.name = "hackbench",
	.summary = "scheduler benchmark (hackbench-style)",
	.traits = 0,
	.host = {
		.figures = TEST_LIST("elapsed_ns", "messages_per_s"),
	},
	.default_duration_ns = NSEC_PER_SEC,
	.options = hb_options,
	.main = hb_main,
};
