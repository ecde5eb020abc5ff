// SPDX-License-Identifier: MIT
/*
 * summary.c - the human summary of a run whose stdout is a terminal and
 * which was given no --output: instead of NDJSON (which a person cannot
 * read at 5 KB/s) it prints, on stderr at the end, one line per series
 * (samples, min, avg, p99, max in microseconds, overruns), the verdicts
 * and the status with its exit code.  Pipes and files get the records.
 */
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "hist.h"
#include "rtprobe.h"
#include "run_impl.h"

/* One series' line; p99 from its histogram (an upper bucket bound). */
static void run_summary_series(const struct run_series *rs)
{
	uint64_t p99;

	if (!rs->count) {
		fmt_fprintf(stderr, "  %-10s no measured samples (warm-up %llu)\n",
			    rs->label, (unsigned long long)rs->w_count);
		return;
	}
	p99 = hist_quantile(rs->hist, 0.99, rs->min_ns, rs->max_ns);
	fmt_fprintf(stderr, "  %-10s %10llu %10.3f %10.3f %10.3f %10.3f %9llu\n",
		    rs->label, (unsigned long long)rs->count, rs->min_ns / 1e3,
		    (double)rs->sum_ns / (double)rs->count / 1e3, p99 / 1e3,
		    rs->max_ns / 1e3, (unsigned long long)rs->overruns);
}

void run_summary(struct run *r, int rc)
{
	const char *status;
	char reason[256];
	int i;

	run_status(r, &status, reason, sizeof(reason));
	fmt_fprintf(stderr, "\nrtprobe %s summary (us; measured samples, warm-up "
		    "excluded):\n  %-10s %10s %10s %10s %10s %10s %9s\n",
		    r->c->test, "series", "samples", "min", "avg", "p99", "max",
		    "overruns");
	for (i = 0; i < r->nseries; i++)
		run_summary_series(r->series[i]);
	for (i = 0; i < r->nverdicts; i++)
		fmt_fprintf(stderr, "  %s %s: %s\n",
			    r->verdicts[i].pass ? "pass" : "FAIL",
			    r->verdicts[i].name, r->verdicts[i].detail);
	fmt_fprintf(stderr, "status: %s%s%s (exit %d)\n", status,
		    reason[0] ? ": " : "", reason, rc);
}
