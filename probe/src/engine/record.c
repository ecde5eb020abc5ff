// SPDX-License-Identifier: MIT
/*
 * record.c - the records of a measurement run (docs/schema.md): start,
 * window, spike and result, written through the run's output (output.h).
 * The collector (run.c) calls these; nothing here runs in a measuring
 * thread.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "footprint.h"
#include "opt.h"
#include "output.h"
#include "rtprobe.h"
#include "run_impl.h"
#include "sysinfo.h"

/* Format ns as microseconds, without trailing zeros ("100us", "2.5us"). */
void run_fmt_us(char *buf, size_t len, uint64_t ns)
{
	int n;

	if (ns % NSEC_PER_USEC == 0) {
		fmt_snprintf(buf, len, "%lluus",
			     (unsigned long long)(ns / NSEC_PER_USEC));
		return;
	}
	n = fmt_snprintf(buf, len, "%llu.%03llu",
			 (unsigned long long)(ns / NSEC_PER_USEC),
			 (unsigned long long)(ns % NSEC_PER_USEC));
	while (n > 0 && (size_t)n < len && buf[n - 1] == '0')
		buf[--n] = '\0';
	fmt_snprintf(buf + n, len - (size_t)n, "us");
}

/* Record the output's first failure and stop the run. */
static void run_output_failed(struct run *r, int err)
{
	if (r->out_failed)
		return;
	r->out_failed = true;
	fmt_snprintf(r->out_error, sizeof(r->out_error), "writing %s: %s",
		     output_name(&r->out), strerror(err));
	run_request_stop(r, "error");
}

void run_check_output(struct run *r)
{
	if (r->outq_on && outq_failed(&r->outq))
		run_output_failed(r, r->out.err ? r->out.err : EIO);
}

/*
 * Write one NDJSON record: into the queue (outq.h) when its writer runs,
 * else directly.  must: wait for room rather than drop (a simulated run's
 * records are all must, so its output is complete and reproducible).
 */
static void run_emit_as(struct run *r, bool must, bool window)
{
	struct json *j = &r->j;

	if (r->out_discard) {
		json_reset(j);
		return;
	}
	if (!r->outq_on) {
		if (!output_emit(&r->out, j))
			run_output_failed(r, r->out.err);
		return;
	}
	if (j->failed || !j->buf || j->depth) {
		json_reset(j);
		run_output_failed(r, ENOMEM);
		return;
	}
	/* json.c keeps a byte free after the text: room for the newline. */
	j->buf[j->len] = '\n';
	/* Once the measuring threads ended, waiting costs no measurement. */
	outq_push(&r->outq, j->buf, j->len + 1,
		  must || r->threads_done || SIMULATED(r->c->simulate), window);
	json_reset(j);
	run_check_output(r);
}

void run_emit(struct run *r)
{
	run_emit_as(r, false, false);
}

void run_emit_window(struct run *r)
{
	run_emit_as(r, false, true);
}

void run_emit_must(struct run *r)
{
	run_emit_as(r, true, false);
}

/* Write the "common" object of the start record. */
static void run_write_common(struct run *r)
{
	const struct rtp_common *c = r->c;
	struct json *j = &r->j;
	char cpus[256];
	int i;

	opt_cpulist_format(&c->cpus, cpus, sizeof(cpus));
	json_begin_object(j, "common");
	json_str(j, "policy", common_policy_name(c->policy));
	json_u64(j, "priority", (uint64_t)c->priority);
	json_str(j, "cpus", cpus);
	json_u64(j, "threads", (uint64_t)c->nthreads);
	if (c->loops) {
		json_null(j, "duration_ns");
		json_u64(j, "loops", c->loops);
	} else {
		json_u64(j, "duration_ns", c->duration_ns);
		json_null(j, "loops");
	}
	json_u64(j, "warmup_ns", c->warmup_ns);
	json_begin_array(j, "thresholds_ns");
	for (i = 0; i < c->nthresholds; i++)
		json_u64(j, NULL, c->thresholds_ns[i]);
	json_end_array(j);
	json_u64(j, "worst_n", (uint64_t)c->worst_n);
	if (c->break_on_ns)
		json_u64(j, "break_on_ns", c->break_on_ns);
	else
		json_null(j, "break_on_ns");
	json_str(j, "break_action", c->break_continue ? "continue" : "stop");
	json_str(j, "on_spike", c->on_spike_cmd);
	json_str(j, "raw", c->raw_path);
	if (c->raw_path)
		json_u64(j, "raw_buffer", c->raw_buffer);
	else
		json_null(j, "raw_buffer");
	json_str(j, "output", c->output_path);
	json_bool(j, "verbose", c->verbose);
	json_end_object(j);
}

/* Write the start record. */
void run_write_start(struct run *r)
{
	const struct rtp_common *c = r->c;
	struct json *j = &r->j;
	char cpus[256];
	int i;

	record_begin(j, "start");
	record_start_header(j, c->test, SIMULATED(c->simulate),
			    SIMULATED(c->simulate) ? c->sim.text : NULL,
			    r->argc, r->argv);
	json_str(j, "clock", c->clock_name);
	json_u64(j, "t0_ns", r->t0_ns);
	json_u64(j, "t0_unix_ns", r->t0_unix_ns);
	json_str(j, "hist_layout", HIST_LAYOUT_NAME);
	json_u64(j, "window_ns", r->c->window_ns);
	run_write_common(r);
	json_begin_object(j, "params");
	if (r->params_fn)
		r->params_fn(j, r->params_ctx);
	json_end_object(j);
	rt_write_state(j, "rt", c, &r->rt);
	if (r->collector_pinned) {
		opt_cpulist_format(&r->collector_cpus, cpus, sizeof(cpus));
		json_str(j, "collector_cpus", cpus);
	} else {
		json_null(j, "collector_cpus");
	}
	json_str(j, "tracefs", r->tracefs);
	json_begin_array(j, "series");
	for (i = 0; i < r->nseries; i++) {
		json_begin_object(j, NULL);
		json_u64(j, "index", (uint64_t)i);
		json_str(j, "label", r->series[i]->label);
		if (r->series[i]->cpu >= 0)
			json_i64(j, "cpu", r->series[i]->cpu);
		else
			json_null(j, "cpu");
		json_end_object(j);
	}
	json_end_array(j);
	sysinfo_write(j, "sysinfo");
	json_end_object(j);
	run_emit_must(r);
}

/* Write min/max members, null when there is no sample. */
static void run_min_max(struct json *j, uint64_t count, uint64_t min_ns,
			uint64_t max_ns)
{
	if (count) {
		json_u64(j, "min_ns", min_ns);
		json_u64(j, "max_ns", max_ns);
	} else {
		json_null(j, "min_ns");
		json_null(j, "max_ns");
	}
}

/*
 * Format a taken window's record in r->j (run_emit_window writes it), add it
 * to the totals and clear its histogram: the slot can go back at once.
 */
void run_take_window(struct run *r, struct run_series *rs, int idx,
			    const struct series_window *w, struct hist32 *h)
{
	struct json *j = &r->j;
	unsigned int b, b_first, b_last;
	int i;

	record_begin(j, "window");
	json_u64(j, "series", (uint64_t)idx);
	json_u64(j, "index", w->index);
	json_bool(j, "warmup", w->warmup);
	json_u64(j, "start_ns", w->start_ns);
	json_u64(j, "end_ns", w->end_ns);
	json_u64(j, "count", w->count);
	run_min_max(j, w->count, w->min_ns, w->max_ns);
	json_u64(j, "sum_ns", w->sum_ns);
	json_u64(j, "overruns", w->overruns);
	json_u64(j, "early", w->early);
	json_u64(j, "merged", w->merged);
	json_u64(j, "gaps", w->gaps);
	json_u64(j, "gap_ns", w->gap_ns);
	json_begin_array(j, "exceed");
	for (i = 0; i < r->c->nthresholds; i++)
		json_u64(j, NULL, w->exceed[i]);
	json_end_array(j);
	json_begin_array(j, "hist");
	/* Only buckets between the window's min and max can be non-zero. */
	b_first = w->count ? hist_index(w->min_ns) : 1;
	b_last = w->count ? hist_index(w->max_ns) : 0;
	for (b = b_first; b <= b_last; b++) {
		if (!h->count[b])
			continue;
		json_pair_u64(j, b, h->count[b]);
		if (!w->warmup)
			rs->hist->count[b] += h->count[b];
		h->count[b] = 0;
	}
	json_end_array(j);
	json_end_object(j);

	rs->fresh = true;
	if (w->warmup) {
		rs->w_count += w->count;
		rs->w_sum_ns += w->sum_ns;
		rs->w_overruns += w->overruns;
		rs->w_gaps += w->gaps;
		rs->w_gap_ns += w->gap_ns;
		if (w->count && w->min_ns < rs->w_min_ns)
			rs->w_min_ns = w->min_ns;
		if (w->count && w->max_ns > rs->w_max_ns)
			rs->w_max_ns = w->max_ns;
		return;
	}
	rs->count += w->count;
	rs->sum_ns += w->sum_ns;
	rs->overruns += w->overruns;
	rs->gaps += w->gaps;
	rs->gap_ns += w->gap_ns;
	rs->early += w->early;
	if (w->count && w->min_ns < rs->min_ns)
		rs->min_ns = w->min_ns;
	if (w->count && w->max_ns > rs->max_ns)
		rs->max_ns = w->max_ns;
	for (i = 0; i < r->c->nthresholds; i++)
		rs->exceed[i] += w->exceed[i];
	if (w->count && w->last_t_ns > rs->last_t_ns)
		rs->last_t_ns = w->last_t_ns;
}

/* Write a spike record (threshold_ns: the highest threshold crossed). */
void run_take_spike(struct run *r, int idx,
			   const struct series_spike *sp)
{
	struct json *j = &r->j;
	const bool crossed = r->c->nthresholds &&
			     sp->latency_ns >= r->c->thresholds_ns[0];
	uint64_t th = crossed ? r->c->thresholds_ns[0] :
				r->c->trace_threshold_ns;
	int i;

	for (i = 1; i < r->c->nthresholds; i++)
		if (sp->latency_ns >= r->c->thresholds_ns[i])
			th = r->c->thresholds_ns[i];
	record_begin(j, "spike");
	json_u64(j, "series", (uint64_t)idx);
	json_u64(j, "t_ns", sp->t_ns);
	json_u64(j, "latency_ns", sp->latency_ns);
	json_u64(j, "threshold_ns", th);
	json_end_object(j);
	run_emit(r);
}

/* Write one series of the result record. */
static void run_write_series_result(struct run *r, int idx)
{
	struct series_worst worst[COMMON_MAX_WORST];
	struct run_series *rs = r->series[idx];
	struct json *j = &r->j;
	const char *err;
	unsigned int b;
	int i, n;

	json_begin_object(j, NULL);
	json_u64(j, "index", (uint64_t)idx);
	json_str(j, "label", rs->label);
	if (rs->cpu >= 0)
		json_i64(j, "cpu", rs->cpu);
	else
		json_null(j, "cpu");
	if (rs->tid > 0)
		json_i64(j, "tid", rs->tid);
	else
		json_null(j, "tid");
	json_u64(j, "count", rs->count);
	run_min_max(j, rs->count, rs->min_ns, rs->max_ns);
	json_u64(j, "sum_ns", rs->sum_ns);
	json_u64(j, "overruns", rs->overruns);
	json_u64(j, "early", rs->early);
	json_begin_array(j, "exceed");
	for (i = 0; i < r->c->nthresholds; i++) {
		json_begin_object(j, NULL);
		json_u64(j, "threshold_ns", r->c->thresholds_ns[i]);
		json_u64(j, "count", rs->exceed[i]);
		json_end_object(j);
	}
	json_end_array(j);
	n = series_worst_sorted(rs->s, worst, COMMON_MAX_WORST);
	json_begin_array(j, "worst");
	for (i = 0; i < n; i++) {
		json_begin_object(j, NULL);
		json_u64(j, "t_ns", worst[i].t_ns);
		json_u64(j, "latency_ns", worst[i].latency_ns);
		json_end_object(j);
	}
	json_end_array(j);
	json_begin_object(j, "warmup");
	json_u64(j, "count", rs->w_count);
	run_min_max(j, rs->w_count, rs->w_min_ns, rs->w_max_ns);
	json_u64(j, "sum_ns", rs->w_sum_ns);
	json_u64(j, "overruns", rs->w_overruns);
	json_u64(j, "gaps", rs->w_gaps);
	json_u64(j, "gap_ns", rs->w_gap_ns);
	json_end_object(j);
	json_begin_array(j, "hist");
	for (b = 0; b < HIST_BUCKETS; b++) {
		if (!rs->hist->count[b])
			continue;
		json_pair_u64(j, b, rs->hist->count[b]);
	}
	json_end_array(j);
	json_u64(j, "spikes_dropped", series_spikes_dropped(rs->s));
	json_u64(j, "raw_dropped", series_raw_dropped(rs->s));
	json_u64(j, "windows_merged", series_merged(rs->s));
	json_u64(j, "gaps", rs->gaps);
	json_u64(j, "gap_ns", rs->gap_ns);
	json_u64(j, "start_ns", series_start_ns(rs->s));
	err = rs->setup_error[0] ? rs->setup_error : series_error(rs->s);
	json_str(j, "error", err);
	json_end_object(j);
}

/* Write the result record; returns the exit code. */
int run_write_result(struct run *r, uint64_t elapsed_ns)
{
	struct json *j = &r->j;
	uint64_t raw_dropped = 0;
	const char *status;
	char reason[256];
	int rc, i;

	rc = run_status(r, &status, reason, sizeof(reason));
	record_begin(j, "result");
	json_str(j, "test", r->c->test);
	json_str(j, "status", status);
	json_u64(j, "exit_code", (uint64_t)rc);
	json_str(j, "reason", reason[0] ? reason : NULL);
	json_bool(j, "simulated", SIMULATED(r->c->simulate));
	json_u64(j, "elapsed_ns", elapsed_ns);
	json_u64(j, "measured_ns", run_measured_ns(r, status));
	json_begin_array(j, "series");
	for (i = 0; i < r->nseries; i++)
		run_write_series_result(r, i);
	json_end_array(j);
	json_begin_array(j, "verdicts");
	for (i = 0; i < r->nverdicts; i++) {
		json_begin_object(j, NULL);
		json_str(j, "name", r->verdicts[i].name);
		json_bool(j, "pass", r->verdicts[i].pass);
		json_str(j, "detail", r->verdicts[i].detail);
		json_end_object(j);
	}
	json_end_array(j);
	if (atomic_load(&r->break_taken)) {
		json_begin_object(j, "break");
		json_u64(j, "series", (uint64_t)r->break_series);
		json_u64(j, "t_ns", r->break_t_ns);
		json_u64(j, "latency_ns", r->break_latency_ns);
		json_bool(j, "tracing_stopped", r->trace_on_fd >= 0);
		json_end_object(j);
	} else {
		json_null(j, "break");
	}
	if (r->c->raw_path) {
		for (i = 0; i < r->nseries; i++)
			raw_dropped += series_raw_dropped(r->series[i]->s);
		json_begin_object(j, "raw");
		json_str(j, "path", r->c->raw_path);
		json_u64(j, "records", r->raw_records);
		json_u64(j, "dropped", raw_dropped);
		json_str(j, "error", r->raw_error[0] ? r->raw_error : NULL);
		json_end_object(j);
	} else {
		json_null(j, "raw");
	}
	footprint_write(j);
	json_begin_object(j, "output");
	json_u64(j, "queue_bytes", r->outq_on ? r->outq.cap : 0);
	json_u64(j, "max_queued_bytes", r->outq_on ? r->outq.max_len : 0);
	json_u64(j, "dropped_records", r->outq_on ? r->outq.dropped : 0);
	json_u64(j, "dropped_windows",
		 r->outq_on ? r->outq.dropped_windows : 0);
	json_end_object(j);
	json_begin_object(j, "on_spike");
	json_u64(j, "runs", r->spike_runs);
	json_u64(j, "skipped", r->spike_skipped);
	json_end_object(j);
	json_begin_object(j, "data");
	if (r->data_fn)
		r->data_fn(j, r->data_ctx);
	json_end_object(j);
	json_end_object(j);
	run_emit_must(r);
	/* An output failure found while writing the result changes nothing now. */
	return rc;
}
