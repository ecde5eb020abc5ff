// SPDX-License-Identifier: MIT
/*
 * ipc.c - round-trip latency and bandwidth between two processes (lmbench
 * lat_pipe, lat_fifo, lat_unix and bw_pipe semantics).
 *
 * Latency: each measuring thread forks a peer process (a peer ready only
 * after t0 moves the series' start: ipc_latency_loop); the thread writes one
 * machine word, the peer reads it and writes it back, the thread reads it:
 * latency = time of that round trip (two one-way messages and, on one CPU,
 * two context switches).  Samples go into the thread's latency series, back
 * to back, so the usual statistics, windows and thresholds apply.
 *
 * Bandwidth (--bandwidth): the peer writes --total bytes in --chunk sized
 * writes and the thread reads them in --chunk sized reads; MB/s = bytes /
 * elapsed, the median of --repetitions transfers, in the result's data.
 *
 * Channels are created in the main thread before the run starts, so a
 * missing resource ends the run with exit 3 before anything is measured:
 * two pipes (pipe), two FIFOs in a private directory (fifo, opened by both
 * sides after the fork in a fixed order so neither blocks for ever), or one
 * AF_UNIX stream socketpair (unix).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
#include "sort.h"
#include "testdesc.h"

#define IPC_MAX_PAIRS 64
#define IPC_MAX_REPETITIONS 1000
/*
 * Back-to-back round trips keep an RT pair 100 % busy; the kernel's RT
 * throttling (95 % by default) would then stall it for 50 ms each second and
 * the stall would show up as a false maximum.  So after every
 * IPC_BURST_NS of round trips the thread pauses IPC_PAUSE_NS, between two
 * samples (RT duty about 90 %).
 */
#define IPC_BURST_NS (10 * NSEC_PER_MSEC)
#define IPC_PAUSE_NS NSEC_PER_MSEC
#define IPC_PEER_SAME (-2)
#define IPC_PEER_ANY (-1)

/* Exit codes of the peer process. */
#define IPC_PEER_IO 10
#define IPC_PEER_OPEN 11
#define IPC_PEER_AFFINITY 12
#define IPC_PEER_MEM 13

enum ipc_transport { IPC_PIPE, IPC_FIFO, IPC_UNIX };

static const char *const ipc_transport_names[] = { "pipe", "fifo", "unix",
						   NULL };

struct ipc_config {
	enum ipc_transport transport;
	bool bandwidth;
	uint64_t chunk_bytes;
	uint64_t total_bytes;
	unsigned int repetitions;
	int peer_cpu;            /* a CPU, IPC_PEER_SAME or IPC_PEER_ANY */
	const char *fifo_dir;
};

/* One measuring side and its peer process. */
struct ipc_pair {
	struct ipc_test *test;
	struct series *series;   /* NULL in bandwidth mode */
	int index;
	int cpu;                 /* measuring thread's CPU */
	int my_in, my_out;       /* the thread's ends */
	int peer_in, peer_out;   /* the peer's ends */
	char fifo_to_peer[PATH_MAX];
	char fifo_from_peer[PATH_MAX];
	uint64_t bw_ns[IPC_MAX_REPETITIONS]; /* bandwidth: time per transfer */
	unsigned int bw_done;
	char error[200];
};

struct ipc_test {
	struct ipc_config cfg;
	const struct rtp_common *common;
	struct run *run;
	cpu_set_t allowed;       /* for --peer-cpu any */
	char fifo_dir[PATH_MAX - 32]; /* created directory, "" when none */
	struct ipc_pair pairs[IPC_MAX_PAIRS];
	int npairs;
};

/* Close fd if open and mark it closed. */
static void ipc_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Create the pair's channel in the main thread; 0 or -1 with a message printed. */
static int ipc_channel_create(struct ipc_test *t, struct ipc_pair *p)
{
	int a[2], b[2];

	p->my_in = p->my_out = p->peer_in = p->peer_out = -1;
	switch (t->cfg.transport) {
	case IPC_PIPE:
		if (pipe(a))
			goto fail;
		if (pipe(b)) {
			close(a[0]);
			close(a[1]);
			goto fail;
		}
		p->peer_in = a[0];
		p->my_out = a[1];
		p->my_in = b[0];
		p->peer_out = b[1];
		return 0;
	case IPC_UNIX:
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, a))
			goto fail;
		p->my_in = p->my_out = a[0];
		p->peer_in = p->peer_out = a[1];
		return 0;
	case IPC_FIFO:
		fmt_snprintf(p->fifo_to_peer, sizeof(p->fifo_to_peer),
			     "%s/to-peer-%d", t->fifo_dir, p->index);
		fmt_snprintf(p->fifo_from_peer, sizeof(p->fifo_from_peer),
			     "%s/from-peer-%d", t->fifo_dir, p->index);
		if (mkfifo(p->fifo_to_peer, 0600) ||
		    mkfifo(p->fifo_from_peer, 0600)) {
			fmt_fprintf(stderr, "rtprobe: --fifo-dir %s: mkfifo: %s; "
				    "give a writable local directory\n",
				    t->cfg.fifo_dir, strerror(errno));
			return -1;
		}
		return 0;
	}
fail:
	fmt_fprintf(stderr, "rtprobe: --transport %s: cannot create the channel "
		    "(%s); raise ulimit -n or use fewer --threads\n",
		    ipc_transport_names[t->cfg.transport], strerror(errno));
	return -1;
}

/* Remove the FIFOs and their directory (safe to call twice). */
static void ipc_fifo_cleanup(struct ipc_test *t)
{
	int i;

	if (!t->fifo_dir[0])
		return;
	for (i = 0; i < t->npairs; i++) {
		if (t->pairs[i].fifo_to_peer[0])
			unlink(t->pairs[i].fifo_to_peer);
		if (t->pairs[i].fifo_from_peer[0])
			unlink(t->pairs[i].fifo_from_peer);
	}
	rmdir(t->fifo_dir);
	t->fifo_dir[0] = '\0';
}

/* Peer: echo words until EOF. */
static __attribute__((noreturn)) void ipc_peer_echo(int in, int out)
{
	unsigned long word;
	ssize_t n;

	for (;;) {
		n = fdio_read_full(in, &word, sizeof(word));
		if (n == 0)
			_exit(0);
		if (n < 0 || fdio_write_full(out, &word, sizeof(word)))
			_exit(IPC_PEER_IO);
	}
}

/* Peer: for each requested byte count, write that many bytes in chunks. */
static __attribute__((noreturn)) void ipc_peer_stream(int in, int out,
						      uint64_t chunk)
{
	char *buf;
	uint64_t want, n;
	ssize_t got;

	buf = mmap(NULL, chunk, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		_exit(IPC_PEER_MEM);
	memset(buf, 'x', chunk);
	for (;;) {
		got = fdio_read_full(in, &want, sizeof(want));
		if (got == 0)
			_exit(0);
		if (got < 0)
			_exit(IPC_PEER_IO);
		for (; want; want -= n) {
			n = want < chunk ? want : chunk;
			if (fdio_write_full(out, buf, n))
				_exit(IPC_PEER_IO);
		}
	}
}

/* Peer process body: open its ends, pin, then echo or stream. */
static __attribute__((noreturn)) void ipc_peer(struct ipc_test *t,
					       struct ipc_pair *p)
{
	cpu_set_t set;
	int in = p->peer_in, out = p->peer_out, i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/*
	 * Drop the other pairs' descriptors (this is the snapshot taken at the
	 * fork): a copy of another pair's write end would keep its peer from
	 * ever seeing end of file.
	 */
	for (i = 0; i < t->npairs; i++) {
		if (i == p->index)
			continue;
		ipc_close(&t->pairs[i].my_in);
		ipc_close(&t->pairs[i].my_out);
		ipc_close(&t->pairs[i].peer_in);
		ipc_close(&t->pairs[i].peer_out);
	}
	if (t->cfg.peer_cpu == IPC_PEER_ANY) {
		if (sched_setaffinity(0, sizeof(t->allowed), &t->allowed))
			_exit(IPC_PEER_AFFINITY);
	} else if (t->cfg.peer_cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET((size_t)t->cfg.peer_cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			_exit(IPC_PEER_AFFINITY);
	}
	if (t->cfg.transport == IPC_FIFO) {
		/* same order as the thread: to-peer first, then from-peer */
		in = open(p->fifo_to_peer, O_RDONLY);
		if (in < 0)
			_exit(IPC_PEER_OPEN);
		out = open(p->fifo_from_peer, O_WRONLY);
		if (out < 0)
			_exit(IPC_PEER_OPEN);
	} else {
		if (p->my_in != p->my_out)
			close(p->my_in);
		close(p->my_out);
	}
	if (t->cfg.bandwidth)
		ipc_peer_stream(in, out, t->cfg.chunk_bytes);
	ipc_peer_echo(in, out);
}

/* Describe a peer's wait status in err; true if it failed. */
static bool ipc_peer_failed(int status, char *err, size_t errlen)
{
	static const char *const what[] = {
		[IPC_PEER_IO] = "read/write on the channel failed",
		[IPC_PEER_OPEN] = "cannot open its FIFO",
		[IPC_PEER_AFFINITY] = "--peer-cpu: sched_setaffinity failed",
		[IPC_PEER_MEM] = "--chunk: cannot map its buffer",
	};
	int code;

	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return false;
	if (WIFEXITED(status)) {
		code = WEXITSTATUS(status);
		fmt_snprintf(err, errlen, "ipc: peer process: %s",
			     code >= IPC_PEER_IO && code <= IPC_PEER_MEM ?
			     what[code] : "failed");
	} else {
		fmt_snprintf(err, errlen, "ipc: peer process killed by signal %d",
			     WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	}
	return true;
}

/* Record a measuring-side error and stop the run. */
__attribute__((format(__printf__, 2, 3)))
static void ipc_error(struct ipc_pair *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->error[0]) {
		va_start(ap, fmt);
		fmt_vsnprintf(p->error, sizeof(p->error), fmt, ap);
		va_end(ap);
		fmt_fprintf(stderr, "rtprobe: %s\n", p->error);
	}
	/* status error, exit 3 */
	if (p->series)
		series_fail(p->series, p->error);
	else
		run_request_stop(p->test->run, "error");
}

/* Sleep ns (relative) on clock, between samples. */
static void ipc_pause(clockid_t clock, uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / NSEC_PER_SEC),
		.tv_nsec = (long)(ns % NSEC_PER_SEC),
	};

	while (clock_nanosleep(clock, 0, &ts, &ts) == EINTR)
		;
}

/*
 * Latency loop: round trips back to back until the series is complete.  The
 * peer forked and the channel opened after t0 (a slow board): that set-up is
 * a gap and the series' warm-up and measured part start when the pair is
 * ready (series_start), so the set-up is neither lost silently nor taken
 * from the time asked for.
 */
static void ipc_latency_loop(struct ipc_pair *p)
{
	struct run *r = p->test->run;
	uint64_t t0 = run_t0_ns(r), t1, t2, burst = t0, ready = run_now_ns(r);
	unsigned long word = 0;
	int err;

	if (ready > t0) {
		series_start(p->series, ready - t0);
		burst = ready;
	} else {
		/* t0 is a few ms ahead: start on it */
		err = clock_sleep_until(p->test->common->clock, t0);
		if (err) {
			ipc_error(p, "ipc: clock_nanosleep: %s",
				  strerror(err));
			return;
		}
	}
	for (;;) {
		if (run_stopping(r))
			return;
		t1 = run_now_ns(r);
		word++;
		errno = 0;
		if (fdio_write_full(p->my_out, &word, sizeof(word)) ||
		    fdio_read_full(p->my_in, &word, sizeof(word)) !=
		    sizeof(word)) {
			ipc_error(p, "ipc: round trip on %s failed: %s",
				  ipc_transport_names[p->test->cfg.transport],
				  errno ? strerror(errno) : "peer closed");
			return;
		}
		t2 = run_now_ns(r);
		if (series_add(p->series, t1 - t0, (int64_t)(t2 - t1)) ==
		    SERIES_DONE)
			return;
		if (t2 - burst >= IPC_BURST_NS) {
			ipc_pause(p->test->common->clock, IPC_PAUSE_NS);
			burst = run_now_ns(r);
		}
	}
}

/* Bandwidth loop: --repetitions transfers of --total bytes. */
static void ipc_bandwidth_loop(struct ipc_pair *p)
{
	const struct ipc_config *cfg = &p->test->cfg;
	struct run *r = p->test->run;
	uint64_t left, t1, want = cfg->total_bytes;
	ssize_t n;
	char *buf;

	buf = malloc(cfg->chunk_bytes);
	if (!buf) {
		ipc_error(p, "ipc: --chunk %llu: out of memory",
			  (unsigned long long)cfg->chunk_bytes);
		return;
	}
	for (p->bw_done = 0; p->bw_done < cfg->repetitions; p->bw_done++) {
		if (run_stopping(r))
			break;
		t1 = run_now_ns(r);
		errno = 0;
		if (fdio_write_full(p->my_out, &want, sizeof(want)))
			goto io;
		for (left = want; left; left -= (uint64_t)n) {
			n = fdio_read_full(p->my_in, buf,
					   left < cfg->chunk_bytes ?
					   left : cfg->chunk_bytes);
			if (n <= 0)
				goto io;
		}
		p->bw_ns[p->bw_done] = run_now_ns(r) - t1;
		/* idle a ninth of the transfer: RT duty stays below 95 % */
		ipc_pause(p->test->common->clock,
			  p->bw_ns[p->bw_done] / 8 + IPC_PAUSE_NS);
	}
	free(buf);
	return;
io:
	ipc_error(p, "ipc: transfer on %s failed: %s",
		  ipc_transport_names[cfg->transport],
		  errno ? strerror(errno) : "peer closed");
	free(buf);
}

/* Simulated run: draws instead of round trips (or transfer times). */
static void ipc_simulate(struct ipc_pair *p)
{
	const struct ipc_config *cfg = &p->test->cfg;
	struct sim_stream own, *sim;
	uint64_t t = 0, lat;

	if (cfg->bandwidth) {
		sim_stream_init(&own, &p->test->common->sim,
				(uint64_t)p->index);
		for (p->bw_done = 0; p->bw_done < cfg->repetitions;
		     p->bw_done++)
			p->bw_ns[p->bw_done] = sim_next_ns(&own) + 1;
		return;
	}
	sim = series_sim(p->series);
	/* setup=V: the pair is ready V after t0, as ipc_latency_loop's */
	if (sim->cfg->setup_ns) {
		t = sim->cfg->setup_ns;
		series_start(p->series, t);
	}
	for (;;) {
		if (run_stopping(p->test->run))
			return;
		lat = sim_next_ns(sim);
		if (series_add(p->series, t, (int64_t)lat) == SERIES_DONE)
			return;
		t += lat ? lat : 1;
	}
}

/* Measuring thread: fork the peer, measure, stop the peer, reap it. */
static void *ipc_thread(void *arg)
{
	struct ipc_pair *p = arg;
	struct ipc_test *t = p->test;
	char why[160];
	pid_t pid;
	int status;

	if (SIMULATED(t->common->simulate)) {
		ipc_simulate(p);
		goto done;
	}
	pid = fork();
	if (pid < 0) {
		ipc_error(p, "ipc: fork of the peer process: %s",
			  strerror(errno));
		goto done;
	}
	if (pid == 0)
		ipc_peer(t, p);
	if (t->cfg.transport == IPC_FIFO) {
		p->my_out = open(p->fifo_to_peer, O_WRONLY);
		p->my_in = p->my_out < 0 ? -1 :
			   open(p->fifo_from_peer, O_RDONLY);
		if (p->my_in < 0) {
			ipc_error(p, "ipc: --fifo-dir %s: open FIFO: %s",
				  t->cfg.fifo_dir, strerror(errno));
			kill(pid, SIGKILL);
		}
	} else {
		if (p->peer_in != p->peer_out)
			ipc_close(&p->peer_in);
		ipc_close(&p->peer_out);
		p->peer_in = -1;
	}
	if (!p->error[0]) {
		if (t->cfg.bandwidth)
			ipc_bandwidth_loop(p);
		else
			ipc_latency_loop(p);
	}
	/* EOF ends the peer; a stuck peer is killed */
	if (p->my_in != p->my_out)
		ipc_close(&p->my_in);
	ipc_close(&p->my_out);
	p->my_in = -1;
	if (p->error[0])
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!p->error[0] && ipc_peer_failed(status, why, sizeof(why)))
		ipc_error(p, "%s", why);
done:
	if (p->series)
		series_finish(p->series);
	return NULL;
}

/* Write the start record's params. */
static void ipc_write_params(struct json *j, void *arg)
{
	const struct ipc_test *t = arg;
	const struct ipc_config *cfg = &t->cfg;

	json_str(j, "transport", ipc_transport_names[cfg->transport]);
	json_str(j, "mode", cfg->bandwidth ? "bandwidth" : "latency");
	if (cfg->peer_cpu == IPC_PEER_SAME)
		json_str(j, "peer_cpu", "same");
	else if (cfg->peer_cpu == IPC_PEER_ANY)
		json_str(j, "peer_cpu", "any");
	else
		json_i64(j, "peer_cpu", cfg->peer_cpu);
	if (cfg->bandwidth) {
		json_u64(j, "chunk_bytes", cfg->chunk_bytes);
		json_u64(j, "total_bytes", cfg->total_bytes);
		json_u64(j, "repetitions", cfg->repetitions);
	} else {
		json_u64(j, "word_bytes", sizeof(unsigned long));
	}
}

/* Sort helper for uint64_t. */
static int ipc_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Write the result's data: bandwidth per pair, or the latency mode's facts. */
static void ipc_write_data(struct json *j, void *arg)
{
	const struct ipc_test *t = arg;
	const struct ipc_config *cfg = &t->cfg;
	uint64_t sorted[IPC_MAX_REPETITIONS], med;
	unsigned int k;
	int i;

	json_str(j, "transport", ipc_transport_names[cfg->transport]);
	json_str(j, "mode", cfg->bandwidth ? "bandwidth" : "latency");
	if (!cfg->bandwidth)
		return;
	json_begin_array(j, "bandwidth");
	for (i = 0; i < t->npairs; i++) {
		const struct ipc_pair *p = &t->pairs[i];

		json_begin_object(j, NULL);
		json_i64(j, "cpu", p->cpu);
		json_u64(j, "chunk_bytes", cfg->chunk_bytes);
		json_u64(j, "total_bytes", cfg->total_bytes);
		json_begin_array(j, "repetitions");
		for (k = 0; k < p->bw_done; k++) {
			json_begin_object(j, NULL);
			json_u64(j, "elapsed_ns", p->bw_ns[k]);
			json_double(j, "mb_per_s", (double)cfg->total_bytes *
				    1e3 / (double)p->bw_ns[k]);
			json_end_object(j);
		}
		json_end_array(j);
		if (p->bw_done) {
			memcpy(sorted, p->bw_ns, p->bw_done * sizeof(*sorted));
			sort_heap(sorted, p->bw_done, sizeof(*sorted),
				  ipc_cmp_u64);
			med = sorted[(p->bw_done - 1) / 2];
			json_u64(j, "elapsed_ns", med);
			json_double(j, "mb_per_s", (double)cfg->total_bytes *
				    1e3 / (double)med);
			json_double(j, "mib_per_s", (double)cfg->total_bytes *
				    1e9 / (double)med / 1048576.0);
		} else {
			json_null(j, "elapsed_ns");
			json_null(j, "mb_per_s");
			json_null(j, "mib_per_s");
		}
		json_end_object(j);
	}
	json_end_array(j);
}

/* Verdicts: set-up/transfer errors fail; bandwidth runs must complete. */
static void ipc_verdicts(struct run *r, void *arg)
{
	const struct ipc_test *t = arg;
	char detail[240];
	unsigned int least;
	int i, failed = -1;

	for (i = 0; i < t->npairs && failed < 0; i++)
		if (t->pairs[i].error[0])
			failed = i;
	if (failed >= 0) {
		run_add_verdict(r, "channel works", false,
				t->pairs[failed].error);
		return;
	}
	if (!t->cfg.bandwidth)
		return;
	least = t->cfg.repetitions;
	for (i = 0; i < t->npairs; i++)
		if (t->pairs[i].bw_done < least)
			least = t->pairs[i].bw_done;
	fmt_snprintf(detail, sizeof(detail), "%u of %u transfers of %llu bytes",
		     least, t->cfg.repetitions,
		     (unsigned long long)t->cfg.total_bytes);
	run_add_verdict(r, "all transfers done",
			least == t->cfg.repetitions || run_stopping(r),
			detail);
}

enum {
	IPC_OPT_TRANSPORT = 1,
	IPC_OPT_PEER_CPU,
	IPC_OPT_FIFO_DIR,
	IPC_OPT_BANDWIDTH,
	IPC_OPT_CHUNK,
	IPC_OPT_TOTAL,
	IPC_OPT_REPETITIONS,
};

/* Parse --peer-cpu: same | any | a CPU number this process may use. */
static int ipc_parse_peer_cpu(const char *text)
{
	cpu_set_t set;
	uint64_t cpu;

	if (!strcmp(text, "same"))
		return IPC_PEER_SAME;
	if (!strcmp(text, "any"))
		return IPC_PEER_ANY;
	cpu = opt_u64("--peer-cpu", text, 0, CPU_SETSIZE - 1);
	CPU_ZERO(&set);
	CPU_SET((size_t)cpu, &set);
	opt_cpulist_allowed("--peer-cpu", text, &set);
	return (int)cpu;
}

static const struct opt_desc ipc_opts[] = {
	{ .name = "transport", .id = IPC_OPT_TRANSPORT, .type = OPT_CHOICE,
	  .def = "pipe", .metavar = "T", .choices = ipc_transport_names,
	  .help = HELP_IPC_TRANSPORT },
	{ .name = "peer-cpu", .id = IPC_OPT_PEER_CPU, .type = OPT_TEXT,
	  .def = "same", .metavar = "C",
	  .help = HELP_IPC_PEER_CPU },
	{ .name = "fifo-dir", .id = IPC_OPT_FIFO_DIR, .type = OPT_TEXT,
	  .def = "/tmp", .metavar = "DIR",
	  .help = HELP_IPC_FIFO_DIR },
	{ .name = "bandwidth", .id = IPC_OPT_BANDWIDTH, .type = OPT_FLAG,
	  .help = HELP_IPC_BANDWIDTH },
	{ .name = "chunk", .id = IPC_OPT_CHUNK, .type = OPT_SIZE,
	  .def = "64K",
	  .help = HELP_IPC_CHUNK },
	{ .name = "total", .id = IPC_OPT_TOTAL, .type = OPT_SIZE, .def = "64M",
	  .help = HELP_IPC_TOTAL },
	{ .name = "repetitions", .id = IPC_OPT_REPETITIONS,
	  .type = OPT_INTEGER, .def = "5",
	  .help = HELP_IPC_REPETITIONS },
	{ .name = NULL },
};

/* Common options that shape a latency series: refused with --bandwidth. */
#define IPC_LATENCY_ONLY (COMMON_BIT(C_DURATION) | COMMON_BIT(C_LOOPS) | \
			  COMMON_BIT(C_WARMUP) | COMMON_BIT(C_THRESHOLD) | \
			  COMMON_BIT(C_RAW) | COMMON_BIT(C_RAW_BUFFER) | \
			  COMMON_BIT(C_BREAK_ON) | \
			  COMMON_BIT(C_BREAK_ACTION) | \
			  COMMON_BIT(C_ON_SPIKE) | COMMON_BIT(C_WORST))

/* ipc's parse state: the test and the last bandwidth-only option given. */
struct ipc_parse {
	struct ipc_test *t;
	const char *bw_opt, *bw_val;
};

/* Defaults: pipe, one pair, peer on the same CPU; 64 MiB in 64 KiB x 5. */
static void ipc_defaults(void *ctx, struct rtp_common *c)
{
	struct ipc_parse *ip = ctx;
	struct ipc_test *t;

	t = calloc(1, sizeof(*t)); /* large: 64 pairs with paths */
	if (!t) {
		fmt_fprintf(stderr, "rtprobe: ipc: out of memory\n");
		exit(RTP_EXIT_ENV);
	}
	ip->t = t;
	c->threads_requested = 1;
	t->cfg.transport = IPC_PIPE;
	t->cfg.chunk_bytes = 64 * 1024;
	t->cfg.total_bytes = 64 * 1024 * 1024;
	t->cfg.repetitions = 5;
	t->cfg.peer_cpu = IPC_PEER_SAME;
	t->cfg.fifo_dir = "/tmp";
}

/* Parse one of ipc's own options. */
static void ipc_option(void *ctx, struct rtp_common *c, int id,
		       const char *arg)
{
	struct ipc_parse *ip = ctx;
	struct ipc_test *t = ip->t;

	(void)c;
	switch (id) {
	case IPC_OPT_TRANSPORT:
		t->cfg.transport = (enum ipc_transport)opt_choice(
			"--transport", arg, ipc_transport_names);
		return;
	case IPC_OPT_PEER_CPU:
		t->cfg.peer_cpu = ipc_parse_peer_cpu(arg);
		return;
	case IPC_OPT_FIFO_DIR:
		if (!*arg || strlen(arg) > PATH_MAX - 64)
			opt_fail("--fifo-dir", arg, "must be a directory path "
				 "of 1 .. %d characters", PATH_MAX - 64);
		t->cfg.fifo_dir = arg;
		return;
	case IPC_OPT_BANDWIDTH:
		t->cfg.bandwidth = true;
		return;
	case IPC_OPT_CHUNK:
		t->cfg.chunk_bytes = opt_size("--chunk", arg);
		if (!t->cfg.chunk_bytes ||
		    t->cfg.chunk_bytes > 64ULL * 1024 * 1024)
			opt_fail("--chunk", arg, "must be 1 byte .. 64M");
		ip->bw_opt = "--chunk";
		break;
	case IPC_OPT_TOTAL:
		t->cfg.total_bytes = opt_size("--total", arg);
		if (!t->cfg.total_bytes)
			opt_fail("--total", arg, "must be > 0");
		ip->bw_opt = "--total";
		break;
	default:
		t->cfg.repetitions = (unsigned int)opt_u64("--repetitions",
			arg, 1, IPC_MAX_REPETITIONS);
		ip->bw_opt = "--repetitions";
	}
	ip->bw_val = arg;
}

/* Latency-only options with --bandwidth, bandwidth ones without it. */
static void ipc_check(void *ctx, struct rtp_common *c)
{
	struct ipc_parse *ip = ctx;
	const struct opt_desc *d;
	char name[40];

	if (ip->t->cfg.bandwidth && (c->given & IPC_LATENCY_ONLY)) {
		for (d = common_descriptors(); d->name; d++)
			if (c->given & IPC_LATENCY_ONLY & COMMON_BIT(d->id))
				break;
		fmt_snprintf(name, sizeof(name), "--%s", d->name);
		opt_refuse(name, "", "--bandwidth", "no latency series; use "
			   "--repetitions and --total");
	}
	if (!ip->t->cfg.bandwidth && ip->bw_opt)
		opt_refuse(ip->bw_opt, ip->bw_val, "latency mode",
			   "it applies to --bandwidth only");
}

/* Measure round trips (or transfers) between each thread and its peer. */
static int ipc_run(void *ctx, struct rtp_common *c, int argc, char **argv)
{
	struct ipc_test *t = ((struct ipc_parse *)ctx)->t;
	char tmpl[PATH_MAX - 32];
	struct run *r;
	int i, rc;

	if (c->nthreads > IPC_MAX_PAIRS)
		opt_fail("--threads", "", "at most %d pairs", IPC_MAX_PAIRS);
	if (t->cfg.bandwidth) {
		c->duration_ns = 0;
		c->warmup_ns = 0;
		c->loops = 0;
	}
	t->common = c;
	if (sched_getaffinity(0, sizeof(t->allowed), &t->allowed)) {
		fmt_fprintf(stderr, "rtprobe: --peer-cpu: sched_getaffinity: %s\n",
			    strerror(errno));
		return RTP_EXIT_ENV;
	}

	r = run_create(c, argc, argv);
	t->run = r;
	t->npairs = c->nthreads;
	if (t->cfg.transport == IPC_FIFO && !SIMULATED(c->simulate)) {
		fmt_snprintf(tmpl, sizeof(tmpl), "%s/rtprobe-ipc-XXXXXX",
			     t->cfg.fifo_dir);
		if (!mkdtemp(tmpl)) {
			fmt_fprintf(stderr, "rtprobe: --fifo-dir %s: cannot create "
				    "a directory there (%s); give a writable "
				    "directory\n", t->cfg.fifo_dir,
				    strerror(errno));
			return RTP_EXIT_ENV;
		}
		fmt_snprintf(t->fifo_dir, sizeof(t->fifo_dir), "%s", tmpl);
	}
	for (i = 0; i < t->npairs; i++) {
		struct ipc_pair *p = &t->pairs[i];

		p->test = t;
		p->index = i;
		p->cpu = c->cpu_list[i];
		p->my_in = p->my_out = p->peer_in = p->peer_out = -1;
		if (!SIMULATED(c->simulate) && ipc_channel_create(t, p)) {
			ipc_fifo_cleanup(t);
			return RTP_EXIT_ENV;
		}
		if (!t->cfg.bandwidth)
			p->series = percpu_add_series(r, c, i);
	}
	run_set_params(r, ipc_write_params, t);
	run_set_result_data(r, ipc_write_data, t);
	run_set_verdicts(r, ipc_verdicts, t);
	rc = percpu_run(r, c, ipc_thread, t->pairs, sizeof(t->pairs[0]));
	ipc_fifo_cleanup(t);
	free(t);
	return rc;
}

const struct test_desc test_ipc = {
	.name = "ipc",
	.summary = "pipe/fifo/unix round trip and pipe bandwidth",
	.intro = INTRO_IPC,
	.examples = EXAMPLES_IPC,
	.traits = TEST_TIMED | TEST_SERIES | TEST_WARMUP | TEST_SIMULATE |
		  TEST_NO_DEADLINE,
	.host = {
		.figures = TEST_LIST("bandwidth", "transport"),
		.layouts = TEST_LIST("s3c24a0"),
	},
	.default_duration_ns = 2 * NSEC_PER_SEC,
	.untimed_flag = "bandwidth",
	.cpu_option = "cpus",
	.options = ipc_opts,
	.ctx_size = sizeof(struct ipc_parse),
	.defaults = ipc_defaults,
	.option = ipc_option,
	.check = ipc_check,
	.run = ipc_run,
};
