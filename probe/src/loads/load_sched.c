// SPDX-License-Identifier: MIT
/*
 * load_sched.c - `rtprobe load sched`: hackbench-style message groups.
 *
 * Each group has --fds receivers, each owning one pipe or UNIX stream
 * socket pair, and --fds senders; every sender writes --size-byte messages
 * to the receivers of its group in turn, paced so that all senders together
 * send --rate messages a second.  Workers are forked processes (default,
 * like hackbench) or threads.  The achieved rate counts messages received.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdio.h"
#include "fmt.h"
#include "load.h"
#include "opt.h"
#include "rtprobe.h"

#define SCHED_IDLE_MS 100
#define SCHED_READ_BUF 65536

enum { SCHED_SENT, SCHED_BYTES_RECEIVED, SCHED_READS };

static const char *const sched_counters[] = {
	"messages_sent", "bytes_received", "reads", NULL,
};

static const struct opt_desc sched_options[] = {
	{ .name = "groups", .id = LOPT_GROUPS, .type = OPT_INTEGER,
	  .def = "1", .help = HELP_LOAD_SCHED_GROUPS },
	{ .name = "fds", .id = LOPT_FDS, .type = OPT_INTEGER,
	  .help = HELP_LOAD_SCHED_FDS },
	{ .name = "pipe", .id = LOPT_PIPE, .type = OPT_FLAG,
	  .help = HELP_LOAD_SCHED_PIPE },
	{ .name = "socket", .id = LOPT_SOCKET, .type = OPT_FLAG,
	  .help = HELP_LOAD_SCHED_SOCKET },
	{ .name = "threads", .id = LOPT_THREADS, .type = OPT_FLAG,
	  .help = HELP_LOAD_SCHED_THREADS },
	{ .name = "processes", .id = LOPT_PROCESSES, .type = OPT_FLAG,
	  .help = HELP_LOAD_SCHED_PROCESSES },
	{ .name = "size", .id = LOPT_SIZE, .type = OPT_SIZE, .def = "100",
	  .metavar = "BYTES", .help = HELP_LOAD_SCHED_SIZE },
	{ .name = NULL },
};

/* One sender or receiver. */
struct sched_task {
	struct load_run *run;
	bool sender;
	int read_fd;               /* receiver: its end */
	const int *write_fds;      /* sender: the group's receivers' ends */
	int nfds;
	int first;                 /* sender: receiver it starts with */
};

/* The sched kind's state. */
struct sched_state {
	int *read_fd;              /* groups x fds */
	int *write_fd;             /* groups x fds */
	int nchannels;
	struct sched_task *task;   /* receivers then senders */
	int ntasks;
};

/* Print the sched kind's example. */
static void sched_usage(FILE *f)
{
	fmt_fprintf(f,
		    "Example: rtprobe load sched --rate 20000 --duration 10s\n");
}

/* Parse the sched kind's options. */
static void sched_handle(struct load_cfg *cfg, int id, const char *arg)
{
	switch (id) {
	case LOPT_GROUPS:
		cfg->groups = (int)opt_u64("--groups", arg, 1, 1000);
		break;
	case LOPT_FDS:
		cfg->fds = (int)opt_u64("--fds", arg, 1, 1000);
		break;
	case LOPT_PIPE:
		cfg->pipe = true;
		break;
	case LOPT_SOCKET:
		cfg->pipe = false;
		break;
	case LOPT_THREADS:
		cfg->processes = false;
		cfg->processes_given = true;
		break;
	case LOPT_PROCESSES:
		cfg->processes = true;
		cfg->processes_given = true;
		break;
	case LOPT_SIZE:
		cfg->size = opt_size("--size", arg);
		if (cfg->size < 1 || cfg->size > 65536)
			opt_fail("--size", arg, "must be 1..65536 bytes");
		cfg->size_given = true;
		break;
	}
}

/* Defaults: one group of 2 x CPUs (max 10) pairs, processes, 100 bytes. */
static void sched_finish(struct load_cfg *cfg)
{
	if (!cfg->groups)
		cfg->groups = 1;
	if (!cfg->fds)
		cfg->fds = cfg->ncpus * 2 > 10 ? 10 : cfg->ncpus * 2;
	if (!cfg->processes_given)
		cfg->processes = true;
	if (!cfg->size_given)
		cfg->size = 100;
}

/* Receive until stop is raised and the channel has been idle a while. */
static void *sched_receiver(struct sched_task *t)
{
	struct load_shared *sh = t->run->shared;
	struct pollfd pfd = { .fd = t->read_fd, .events = POLLIN };
	char *buf = malloc(SCHED_READ_BUF);
	ssize_t n;
	int rc;

	if (!buf) {
		load_fail(sh, "receiver: out of memory");
		return (void *)1;
	}
	for (;;) {
		rc = poll(&pfd, 1, SCHED_IDLE_MS);
		if (rc < 0 && errno != EINTR) {
			load_fail(sh, "receiver poll: %s", strerror(errno));
			break;
		}
		if (rc == 0) {
			if (load_stopping(sh))
				break;
			continue;
		}
		if (rc < 0)
			continue;
		n = read(t->read_fd, buf, SCHED_READ_BUF);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!load_stopping(sh))
				load_fail(sh, "receiver read: %s",
					  n ? strerror(errno) : "end of file");
			break;
		}
		load_count(sh, SCHED_BYTES_RECEIVED, (uint64_t)n);
		load_count(sh, SCHED_READS, 1);
	}
	free(buf);
	return NULL;
}

/* Send paced messages to the group's receivers in turn until stop. */
static void *sched_sender(struct sched_task *t)
{
	struct load_run *r = t->run;
	struct load_shared *sh = r->shared;
	struct load_pacer pacer;
	int next = t->first, e;
	double rate = r->cfg.rate_max ? 0 :
		r->cfg.rate / (r->cfg.groups * r->cfg.fds);
	char *buf = calloc(1, r->cfg.size);
	uint64_t n, i;

	if (!buf) {
		load_fail(sh, "sender: out of memory");
		return (void *)1;
	}
	load_pacer_init(&pacer, rate, 64);
	while ((n = load_pacer_next(&pacer, sh))) {
		for (i = 0; i < n; i++) {
			e = fdio_write_full(t->write_fds[next], buf,
					    r->cfg.size) ? errno : 0;
			if (e) {
				if (!load_stopping(sh))
					load_fail(sh, "sender write: %s",
						  strerror(e));
				goto out;
			}
			if (++next == t->nfds)
				next = 0;
		}
		load_pacer_done(&pacer, n);
		load_count(sh, SCHED_SENT, n);
	}
out:
	free(buf);
	return NULL;
}

/* Entry point of a sched worker. */
static void *sched_task_main(void *arg)
{
	struct sched_task *t = arg;

	return t->sender ? sched_sender(t) : sched_receiver(t);
}

/* Create the channels (pipes or socket pairs) and describe the tasks. */
static int sched_prepare(struct load_run *r, char *err, size_t errlen)
{
	struct sched_state *st = calloc(1, sizeof(*st));
	int g, i, fds[2], n;

	if (!st) {
		fmt_snprintf(err, errlen, "out of memory");
		return RTP_EXIT_ENV;
	}
	r->state = st;
	load_workers_init(&r->workers, r->cfg.processes);
	load_raise_nofile();
	n = r->cfg.groups * r->cfg.fds;
	st->read_fd = malloc((size_t)n * sizeof(int));
	st->write_fd = malloc((size_t)n * sizeof(int));
	st->task = calloc((size_t)n * 2, sizeof(*st->task));
	if (!st->read_fd || !st->write_fd || !st->task) {
		fmt_snprintf(err, errlen, "out of memory for %d tasks", 2 * n);
		return RTP_EXIT_ENV;
	}
	for (i = 0; i < n; i++) {
		if (r->cfg.pipe ? pipe(fds) :
		    socketpair(AF_UNIX, SOCK_STREAM, 0, fds)) {
			fmt_snprintf(err, errlen, "%s for --groups %d --fds %d: %s%s",
				     r->cfg.pipe ? "pipe" : "socketpair",
				     r->cfg.groups, r->cfg.fds, strerror(errno),
				     errno == EMFILE ? " (raise ulimit -n or use "
						   "fewer --groups/--fds)" : "");
			return RTP_EXIT_ENV;
		}
		st->read_fd[i] = fds[0];
		st->write_fd[i] = fds[1];
		st->nchannels++;
	}
	for (g = 0; g < r->cfg.groups; g++) {
		for (i = 0; i < r->cfg.fds; i++) {
			struct sched_task *rx = &st->task[st->ntasks++];

			rx->run = r;
			rx->read_fd = st->read_fd[g * r->cfg.fds + i];
		}
		for (i = 0; i < r->cfg.fds; i++) {
			struct sched_task *tx = &st->task[st->ntasks++];

			tx->run = r;
			tx->sender = true;
			tx->write_fds = &st->write_fd[g * r->cfg.fds];
			tx->nfds = r->cfg.fds;
			tx->first = i;
		}
	}
	return 0;
}

/* Write the sched kind's parameters. */
static void sched_params(struct json *j, const struct load_run *r)
{
	json_i64(j, "groups", r->cfg.groups);
	json_i64(j, "fds", r->cfg.fds);
	json_i64(j, "tasks", 2 * r->cfg.groups * r->cfg.fds);
	json_str(j, "transport", r->cfg.pipe ? "pipe" : "socket");
	json_str(j, "workers", r->cfg.processes ? "processes" : "threads");
	json_u64(j, "size", r->cfg.size);
}

/* Start every task (receivers first). */
static int sched_start(struct load_run *r, char *err, size_t errlen)
{
	struct sched_state *st = r->state;
	int i;

	for (i = 0; i < st->ntasks; i++)
		if (load_workers_spawn(&r->workers, sched_task_main,
				       &st->task[i], -1, err, errlen))
			return RTP_EXIT_ENV;
	return 0;
}

/* Messages received per second. */
static double sched_achieved(const struct load_run *r, const uint64_t *delta,
			     double seconds)
{
	return (double)delta[SCHED_BYTES_RECEIVED] / (double)r->cfg.size /
	       seconds;
}

/* Close the channels. */
static void sched_cleanup(struct load_run *r)
{
	struct sched_state *st = r->state;
	int i;

	if (!st)
		return;
	for (i = 0; i < st->nchannels; i++) {
		close(st->read_fd[i]);
		close(st->write_fd[i]);
	}
	free(st->read_fd);
	free(st->write_fd);
	free(st->task);
	free(st);
	r->state = NULL;
}

const struct load_kind load_kind_sched = {
	.name = "sched",
	.unit = "messages/s",
	.summary = "hackbench-style groups of senders and receivers",
	.rate_lo = 1,
	.rate_hi = 1e9,
	.counter_names = sched_counters,
	.options = sched_options,
	.usage = sched_usage,
	.handle = sched_handle,
	.finish = sched_finish,
	.prepare = sched_prepare,
	.params = sched_params,
	.start = sched_start,
	.achieved = sched_achieved,
	.cleanup = sched_cleanup,
};
