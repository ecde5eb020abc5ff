// SPDX-License-Identifier: MIT
/*
 * raw.c - the raw-sample writer of a run (--raw FILE, format in run.h): a
 * non-RT thread drains each series' ring every 10 ms into the file, which
 * is written atomically (output.h): a write error leaves FILE as it was and
 * ends the run with exit 3.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmt.h"
#include "output.h"
#include "rtprobe.h"
#include "run_impl.h"

/* The writer's stack: small, as under mlockall all of it is locked. */
#define RAW_STACK (128 * 1024)

/* Store v little-endian in n bytes at p. */
static void run_put_le(unsigned char *p, uint64_t v, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/* Record the first raw-file error (err: an errno value). */
static void run_raw_fail(struct run *r, const char *what, int err)
{
	if (!r->raw_error[0])
		fmt_snprintf(r->raw_error, sizeof(r->raw_error), "%s %s: %s",
			     what, r->c->raw_path, strerror(err));
}

/* Open --raw FILE and write its header; 0 or an exit code with a line. */
static int run_open_raw(struct run *r)
{
	unsigned char hdr[32];
	int rc;

	rc = output_open(&r->raw, "--raw", r->c->raw_path);
	if (rc)
		return rc;
	r->raw_open = true;
	memset(hdr, 0, sizeof(hdr));
	memcpy(hdr, "RTPRAW01", 8);
	run_put_le(hdr + 8, 32, 4);
	run_put_le(hdr + 12, 24, 4);
	run_put_le(hdr + 16, r->t0_ns, 8);
	run_put_le(hdr + 24, (uint64_t)r->c->clock, 4);
	if (!output_write(&r->raw, hdr, sizeof(hdr)))
		run_raw_fail(r, "write", r->raw.err);
	return 0;
}

/* Drain every series' raw ring into the file once; returns records moved. */
static uint64_t run_raw_pass(struct run *r, struct series_raw *buf,
			     unsigned char *bytes)
{
	uint64_t moved = 0, warm_end;
	unsigned int n, k;
	uint32_t flags;
	int i;

	for (i = 0; i < r->nseries; i++) {
		/* Read after the drain: a series' start precedes its samples. */
		while ((n = series_raw_drain(r->series[i]->s, buf,
					     RUN_RAW_CHUNK)) > 0) {
			warm_end = series_start_ns(r->series[i]->s) +
				   r->c->warmup_ns;
			for (k = 0; k < n; k++) {
				unsigned char *p = bytes + 24 * k;

				flags = buf[k].t_ns < warm_end;
				run_put_le(p, buf[k].t_ns, 8);
				run_put_le(p + 8, (uint64_t)buf[k].latency_ns,
					   8);
				run_put_le(p + 16, (uint64_t)i, 4);
				run_put_le(p + 20, flags, 4);
			}
			if (!r->raw_error[0] &&
			    !output_write(&r->raw, bytes, 24 * (size_t)n))
				run_raw_fail(r, "write", r->raw.err);
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
		run_raw_fail(r, "buffer for", ENOMEM);
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

int run_raw_start(struct run *r)
{
	char why[160];
	bool at_policy;
	int rc;

	if (!r->c->raw_path)
		return 0;
	rc = run_open_raw(r);
	if (rc)
		return rc;
	/* SCHED_OTHER, whatever the starting main thread holds (rt.h). */
	rc = rt_thread_start(&r->raw_tid, RAW_STACK, POLICY_OTHER, 0, -1,
			     run_raw_thread, r, &at_policy, why, sizeof(why));
	if (rc) {
		fmt_fprintf(stderr, "rtprobe: --raw: cannot start the writer "
			    "thread: %s\n", why);
		output_discard(&r->raw);
		r->raw_open = false;
		return RTP_EXIT_ENV;
	}
	r->raw_started = true;
	return 0;
}

void run_raw_stop(struct run *r)
{
	if (!r->raw_started)
		return;
	atomic_store(&r->raw_stop, 1);
	pthread_join(r->raw_tid, NULL);
	r->raw_started = false;
}
