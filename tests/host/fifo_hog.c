// SPDX-License-Identifier: MIT
/*
 * fifo_hog.c - a SCHED_FIFO busy loop for the busybox guest of tests/host/qemu_board.py,
 * which has no chrt: built static with musl-gcc by tests/host/test_qemu_slow_console.py.
 *
 * usage: fifo_hog CPU PRIORITY DELAY_MS SPIN_MS
 * Waits until a process named rtprobe has a SCHED_FIFO thread (a measuring thread has
 * started), sleeps DELAY_MS, then spins SPIN_MS on CPU
 * at SCHED_FIFO PRIORITY and exits.  Exit 0 when it spun, 1 on an error (said on stderr).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* CLOCK_MONOTONIC in nanoseconds. */
static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* 1 when thread stat file path runs SCHED_FIFO (field 41 of its stat), else 0. */
static int thread_is_fifo(const char *path)
{
	char buf[1024], *p, *save = NULL;
	FILE *f = fopen(path, "r");
	size_t n;
	int field;

	if (!f)
		return 0;  /* gone meanwhile */
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');  /* the comm may hold spaces */
	if (!p)
		return 0;
	p = strtok_r(p + 1, " ", &save);  /* field 3, the state */
	for (field = 3; p && field < 41; field++)
		p = strtok_r(NULL, " ", &save);
	return p && atoi(p) == SCHED_FIFO;
}

/* 1 when a process named rtprobe has a SCHED_FIFO thread (it measures), else 0. */
static int probe_measures(void)
{
	DIR *proc = opendir("/proc"), *tasks;
	struct dirent *entry, *task;
	char path[600], comm[32];
	int found = 0;

	if (!proc) {
		fprintf(stderr, "fifo_hog: /proc: %s\n", strerror(errno));
		exit(1);
	}
	while (!found && (entry = readdir(proc))) {
		FILE *f;
		int named;

		if (entry->d_name[0] < '0' || entry->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", entry->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;  /* gone meanwhile */
		named = fgets(comm, sizeof(comm), f) && !strncmp(comm, "rtprobe", 7);
		fclose(f);
		if (!named)
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", entry->d_name);
		tasks = opendir(path);
		if (!tasks)
			continue;
		while (!found && (task = readdir(tasks))) {
			if (task->d_name[0] < '0' || task->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%s/stat",
				 entry->d_name, task->d_name);
			found = thread_is_fifo(path);
		}
		closedir(tasks);
	}
	closedir(proc);
	return found;
}

int main(int argc, char **argv)
{
	struct sched_param param = { 0 };
	cpu_set_t cpus;
	long long end;
	int tries;

	if (argc != 5) {
		fprintf(stderr, "usage: fifo_hog CPU PRIORITY DELAY_MS SPIN_MS\n");
		return 1;
	}
	for (tries = 0; !probe_measures(); tries++) {
		if (tries > 6000) {
			fprintf(stderr, "fifo_hog: no rtprobe measured in 60 s\n");
			return 1;
		}
		usleep(10000);
	}
	usleep(atoi(argv[3]) * 1000);
	CPU_ZERO(&cpus);
	CPU_SET(atoi(argv[1]), &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus)) {
		fprintf(stderr, "fifo_hog: CPU %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	param.sched_priority = atoi(argv[2]);
	/* the syscall: musl's sched_setscheduler() is a stub answering ENOSYS */
	if (syscall(SYS_sched_setscheduler, 0, SCHED_FIFO, &param)) {
		fprintf(stderr, "fifo_hog: SCHED_FIFO %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	end = now_ns() + atoi(argv[4]) * 1000000LL;
	while (now_ns() < end)
		;
	return 0;
}
