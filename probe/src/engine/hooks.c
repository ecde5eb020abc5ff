// SPDX-License-Identifier: MIT
/*
 * hooks.c - what a run does about a spike besides recording it:
 * --break-on stops ftrace (tracefs tracing_on, with a trace_marker line)
 * from the measuring thread that saw the sample; --on-spike runs a command
 * from the collector, one at a time, outside every RT thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clocksleep.h"
#include "fmt.h"
#include "rtprobe.h"
#include "run_impl.h"
#include "tracefs.h"

extern char **environ;

bool run_break_hit(struct run *r, int series_index, uint64_t t_ns,
		   uint64_t latency_ns)
{
	char line[160];
	int n;

	if (atomic_exchange(&r->break_taken, 1))
		return false;
	r->break_series = series_index;
	r->break_t_ns = t_ns;
	r->break_latency_ns = latency_ns;
	if (r->trace_marker_fd >= 0) {
		n = fmt_snprintf(line, sizeof(line), "rtprobe: break-on series %d "
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
	return true;
}

/* Find tracefs and open tracing_on and trace_marker; 0 or exit 3 with a line. */
int run_open_tracefs(struct run *r)
{
	char path[96], why[160];
	bool mounted;

	if (tracefs_find(r->tracefs, sizeof(r->tracefs), false, &mounted, why,
			 sizeof(why))) {
		fmt_fprintf(stderr, "rtprobe: --break-on: %s: mount it (mount -t "
			    "tracefs nodev /sys/kernel/tracing) or drop "
			    "--break-on\n", why);
		return RTP_EXIT_ENV;
	}
	fmt_snprintf(path, sizeof(path), "%s/tracing_on", r->tracefs);
	r->trace_on_fd = open(path, O_WRONLY | O_CLOEXEC);
	if (r->trace_on_fd < 0) {
		fmt_fprintf(stderr, "rtprobe: --break-on: cannot open %s: %s; run "
			    "as root or drop --break-on\n", path, strerror(errno));
		return RTP_EXIT_ENV;
	}
	fmt_snprintf(path, sizeof(path), "%s/trace_marker", r->tracefs);
	r->trace_marker_fd = open(path, O_WRONLY | O_CLOEXEC);
	if (r->trace_marker_fd < 0) {
		fmt_fprintf(stderr, "rtprobe: --break-on: cannot open %s: %s; run "
			    "as root or drop --break-on\n", path, strerror(errno));
		return RTP_EXIT_ENV;
	}
	return 0;
}

/* Build "NAME=value" in buf for the on-spike environment. */
static char *run_env_entry(char *buf, size_t len, const char *name,
			   unsigned long long v)
{
	fmt_snprintf(buf, len, "%s=%llu", name, v);
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
void run_on_spike(struct run *r, int idx, const struct series_spike *sp)
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
	pid = run_exec_child(argv, envp, r->pid, !r->out.path);
	free(envp);
	if (pid < 0) {
		r->spike_skipped++;
		return;
	}
	r->child = pid;
	r->spike_runs++;
}

/* Reap the on-spike child if it ended. */
void run_reap(struct run *r)
{
	if (r->child > 0 && waitpid(r->child, NULL, WNOHANG) == r->child)
		r->child = -1;
}

/* Let a still running on-spike child finish (bounded), then kill it. */
void run_wait_child(struct run *r)
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
