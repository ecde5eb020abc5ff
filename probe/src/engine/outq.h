/* SPDX-License-Identifier: MIT */
/*
 * outq.h - the run's record queue: the collector formats records into a
 * bounded byte queue in memory and a writer thread of its own writes them to
 * the output (stdout, a pipe, ssh, a serial console, --output FILE).
 *
 * So a host that reads late blocks the writer thread only: the collector
 * goes on taking windows from the measuring threads (which never wait for
 * it either, series.h) and queues their records.  When the queue is full a
 * record that may be dropped (window, spike, trace records) is dropped and
 * counted; one that must not (start, result, anything after the measuring
 * threads ended) waits for room, which is only ever asked when no thread
 * measures real time (a simulated run's records all wait: none is lost).
 *
 * The collector and the writer share a mutex and a condition variable; no
 * measuring thread ever touches the queue.
 */
#ifndef RTP_OUTQ_H
#define RTP_OUTQ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output.h"

/* Bytes of records a run holds while its output is not read. */
#define OUTQ_BYTES (1024 * 1024)
/* The writer thread's stack (it calls fwrite and fflush only). */
#define OUTQ_STACK (64 * 1024)

struct outq {
	struct output *out;
	pthread_mutex_t lock;
	pthread_cond_t more;       /* writer: bytes queued or closing */
	pthread_cond_t room;       /* collector: bytes written */
	char *buf;
	size_t cap, head, len;     /* ring: len bytes from head */
	bool closing;
	pthread_t tid;
	atomic_int failed;         /* the writer's write failed (out->err) */
	/* Collector side, read after outq_stop(): */
	uint64_t dropped;          /* records dropped for want of room */
	uint64_t dropped_windows;  /* of them: window records */
	size_t max_len;            /* most bytes ever queued */
};

/* Allocate the queue and start its writer thread; 0 or an errno value. */
int outq_start(struct outq *q, struct output *out, size_t cap);

/*
 * Queue one record of n bytes (its newline included).  A full queue drops
 * it (false, counted) unless must: then it waits for room.
 */
bool outq_push(struct outq *q, const char *rec, size_t n, bool must,
	       bool window);

/* True once the writer's write failed (the error is in out->err). */
bool outq_failed(struct outq *q);

/* Write everything queued, stop the writer and free the buffer. */
void outq_stop(struct outq *q);

#endif /* RTP_OUTQ_H */
