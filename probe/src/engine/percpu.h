/* SPDX-License-Identifier: MIT */
/*
 * percpu.h - tests that run one measuring thread on each CPU of --cpus.
 *
 * Such a test adds one series per CPU (labelled "cpuN"), keeps an array of
 * per-thread arguments in CPU-list order and runs them with percpu_run().
 */
#ifndef RTP_PERCPU_H
#define RTP_PERCPU_H

#include <stddef.h>

#include "common.h"
#include "run.h"

/* Add the series "cpuN" for thread i, measured on c->cpu_list[i]. */
struct series *percpu_add_series(struct run *r, const struct rtp_common *c,
				 int i);

/*
 * Begin the run, start fn on each CPU of c->cpu_list (thread i gets
 * (char *)args + i * arg_size) with c's policy and priority, and collect
 * until they end.  Returns the exit code of run_begin() or run_finish().
 */
int percpu_run(struct run *r, const struct rtp_common *c,
	       void *(*fn)(void *), void *args, size_t arg_size);

#endif /* RTP_PERCPU_H */
