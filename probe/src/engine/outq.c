// SPDX-License-Identifier: MIT
/*
 * outq.c - the run's bounded record queue and its writer thread (outq.h).
 */
#include "outq.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt.h"

/* Writer thread: write queued bytes until closing and empty. */
static void *outq_writer(void *arg)
{
	struct outq *q = arg;
	size_t n, head;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->len && !q->closing)
			pthread_cond_wait(&q->more, &q->lock);
		if (!q->len)
			break;
		head = q->head;
		n = q->cap - head < q->len ? q->cap - head : q->len;
		pthread_mutex_unlock(&q->lock);
		/* The bytes [head, head + n) are the writer's until released. */
		if (!output_write(q->out, q->buf + head, n) ||
		    fflush(q->out->f)) {
			if (!q->out->err)
				q->out->err = errno ? errno : EIO;
			atomic_store(&q->failed, 1);
		}
		pthread_mutex_lock(&q->lock);
		q->head = (head + n) % q->cap;
		q->len -= n;
		pthread_cond_broadcast(&q->room);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

int outq_start(struct outq *q, struct output *out, size_t cap)
{
	char why[160];
	bool at_policy;
	int rc;

	memset(q, 0, sizeof(*q));
	q->out = out;
	q->cap = cap;
	atomic_init(&q->failed, 0);
	q->buf = malloc(cap);
	if (!q->buf)
		return ENOMEM;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->more, NULL);
	pthread_cond_init(&q->room, NULL);
	/*
	 * Unbuffered: each chunk goes straight to write(2), and the writer
	 * never mallocs a stdio buffer (a thread's first malloc maps a new
	 * arena, which mlockall would lock whole).  Nothing was written to
	 * the stream yet.
	 */
	setvbuf(out->f, NULL, _IONBF, 0);
	/* A small stack: under mlockall every byte of it is locked and resident. */
	/* SCHED_OTHER, whatever the starting main thread holds (rt.h). */
	rc = rt_thread_start(&q->tid, OUTQ_STACK, POLICY_OTHER, 0, -1,
			     outq_writer, q, &at_policy, why, sizeof(why));
	if (rc) {
		pthread_cond_destroy(&q->room);
		pthread_cond_destroy(&q->more);
		pthread_mutex_destroy(&q->lock);
		free(q->buf);
		q->buf = NULL;
	}
	return rc;
}

/* Copy n bytes into the ring at its tail (room checked by the caller). */
static void outq_copy(struct outq *q, const char *rec, size_t n)
{
	size_t tail = (q->head + q->len) % q->cap;
	size_t first = q->cap - tail < n ? q->cap - tail : n;

	memcpy(q->buf + tail, rec, first);
	memcpy(q->buf, rec + first, n - first);
	q->len += n;
	if (q->len > q->max_len)
		q->max_len = q->len;
}

bool outq_push(struct outq *q, const char *rec, size_t n, bool must,
	       bool window)
{
	pthread_mutex_lock(&q->lock);
	if (n > q->cap) {
		/* Never fits: a must-record waits until the ring is empty. */
		while (must && q->len)
			pthread_cond_wait(&q->room, &q->lock);
		pthread_mutex_unlock(&q->lock);
		if (!must)
			goto drop;
		if (!output_write(q->out, rec, n) || fflush(q->out->f)) {
			if (!q->out->err)
				q->out->err = errno ? errno : EIO;
			atomic_store(&q->failed, 1);
		}
		return true;
	}
	while (must && q->cap - q->len < n)
		pthread_cond_wait(&q->room, &q->lock);
	if (q->cap - q->len < n) {
		pthread_mutex_unlock(&q->lock);
		goto drop;
	}
	outq_copy(q, rec, n);
	pthread_cond_signal(&q->more);
	pthread_mutex_unlock(&q->lock);
	return true;
drop:
	q->dropped++;
	if (window)
		q->dropped_windows++;
	return false;
}

bool outq_failed(struct outq *q)
{
	return atomic_load(&q->failed);
}

void outq_stop(struct outq *q)
{
	if (!q->buf)
		return;
	pthread_mutex_lock(&q->lock);
	q->closing = true;
	pthread_cond_signal(&q->more);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->tid, NULL);
	pthread_cond_destroy(&q->room);
	pthread_cond_destroy(&q->more);
	pthread_mutex_destroy(&q->lock);
	free(q->buf);
	q->buf = NULL;
}
