// SPDX-License-Identifier: MIT
/*
 * test_outq.c - the run's record queue (outq.h): a reader that does not read
 * blocks only the writer thread; the collector's pushes return at once, a
 * full queue drops records and counts them (window records apart), and
 * everything queued reaches the reader once it reads.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "outq.h"
#include "output.h"
#include "tap.h"

#define REC 1000
#define NREC 40

/* Read the pipe to its end; returns the bytes read. */
static size_t drain(int fd)
{
	char buf[4096];
	size_t total = 0;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += (size_t)n;
	return total;
}

static void test_unread_pipe(struct tap *t)
{
	struct output out;
	struct outq q;
	char rec[REC];
	int fds[2], i, accepted = 0, status = 1;

	memset(&out, 0, sizeof(out));
	memset(rec, 'x', sizeof(rec));
	rec[REC - 1] = '\n';
	if (pipe(fds)) {
		tap_ok(t, false, "pipe");
		return;
	}
	fcntl(fds[1], F_SETPIPE_SZ, 4096);
	out.option = "--output";
	out.f = fdopen(fds[1], "w");
	tap_is_int(t, outq_start(&q, &out, 8 * REC), 0, "queue starts");
	/* Nobody reads: the pipe takes ~4 KiB, the queue 8 records. */
	for (i = 0; i < NREC; i++)
		accepted += outq_push(&q, rec, REC, false, i % 2 == 0);
	tap_ok(t, accepted >= 8 && accepted < NREC,
	       "pushes returned at once; the full queue dropped the rest");
	tap_is_u64(t, q.dropped, (uint64_t)(NREC - accepted), "drops counted");
	tap_ok(t, q.dropped_windows > 0 && q.dropped_windows <= q.dropped,
	       "window records counted apart");
	tap_ok(t, q.max_len <= 8 * REC, "never more than the queue holds");
	/* The reader reads now: everything accepted arrives. */
	if (fork() == 0) {
		close(fds[1]);
		_exit(drain(fds[0]) == (size_t)accepted * REC ? 0 : 1);
	}
	outq_stop(&q);
	fclose(out.f);
	close(fds[0]);
	wait(&status);
	tap_ok(t, WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "the reader got every accepted record");
	tap_ok(t, !outq_failed(&q), "no write failed");
}

int main(void)
{
	struct tap t = { 0, 0 };

	test_unread_pipe(&t);
	return tap_done(&t);
}
