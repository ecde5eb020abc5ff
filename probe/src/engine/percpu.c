// SPDX-License-Identifier: MIT
/*
 * percpu.c - one measuring thread on each CPU of --cpus (see percpu.h).
 */
#include "fmt.h"
#include "percpu.h"

#include <stdio.h>

/* Add the series "cpuN" for thread i. */
struct series *percpu_add_series(struct run *r, const struct rtp_common *c,
				 int i)
{
	char label[32];

	fmt_snprintf(label, sizeof(label), "cpu%d", c->cpu_list[i]);
	return run_add_series(r, label, c->cpu_list[i]);
}

/* Begin, spawn fn once per CPU of the list, collect; the exit code. */
int percpu_run(struct run *r, const struct rtp_common *c,
	       void *(*fn)(void *), void *args, size_t arg_size)
{
	int rc, i;

	rc = run_begin(r);
	if (rc)
		return rc;
	/* a thread that cannot start is recorded by run_spawn: exit 3 */
	for (i = 0; i < c->nthreads; i++)
		run_spawn(r, fn, (char *)args + (size_t)i * arg_size,
			  c->cpu_list[i], c->policy, c->priority);
	return run_finish(r);
}
