// SPDX-License-Identifier: MIT
/*
 * test_tracetext.c - the text trace parser and window cutter on fixed
 * texts: one captured on a 6.x kernel (trace_text_6x.txt) and one written
 * by hand in an older kernel's format (trace_text_old.txt: 4-column flags,
 * a tgid column, no flags column, a LOST line, garbage and a truncated
 * line); and the tracefs state file's parser.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tap.h"
#include "tracefs.h"
#include "tracetext.h"

#ifndef RTP_TESTS_DIR
#define RTP_TESTS_DIR "tests"
#endif

static const char *const names[] = {
	"sched:sched_switch", "sched:sched_wakeup", "irq:irq_handler_entry",
	"irq:irq_handler_exit", "irq:softirq_entry",
	"timer:hrtimer_expire_entry", "irq_vectors:local_timer_entry",
};
#define NNAMES ((int)(sizeof(names) / sizeof(names[0])))

/* A fixture's text (malloc'd). */
static char *fixture(const char *name, size_t *len)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", RTP_TESTS_DIR, name);
	return tracefs_slurp("", path, len);
}

/* Compare a counted string with a C string. */
static bool same(const char *p, size_t n, const char *want)
{
	return n == strlen(want) && !memcmp(p, want, n);
}

/* One line of each shape parses into the right fields. */
static void test_lines(struct tap *t)
{
	static const char l6[] = "          python-23132   [001] d..2. "
		"11048.896255: sched_switch: prev_comm=python prev_pid=23132 "
		"==> next_comm=bash next_pid=23148 next_prio=120";
	static const char ltgid[] = "    my-task-name-77    (   77) [000] "
		"d..3   812.000410: sched_switch: task swapper:0 [120]";
	static const char lnoflags[] = "          <idle>-0     [000]   "
		"812.000900: sched_switch: x";
	struct trace_line ev;
	uint64_t lost = 0;

	tap_ok(t, tracetext_parse_line(l6, strlen(l6), &ev, &lost) ==
	       TRACETEXT_EVENT, "6.x line parses");
	tap_ok(t, same(ev.comm, ev.comm_len, "python") && ev.pid == 23132 &&
	       ev.cpu == 1, "6.x comm, pid, cpu");
	tap_is_u64(t, ev.ts_ns, 11048896255000ULL, "6.x timestamp in ns");
	tap_is_u64(t, ev.resolution_ns, 1000, "6-digit fraction: 1 us");
	tap_ok(t, same(ev.event, ev.event_len, "sched_switch"), "event name");
	tap_ok(t, same(ev.text, ev.text_len, "prev_comm=python prev_pid=23132 "
		       "==> next_comm=bash next_pid=23148 next_prio=120"),
	       "text after the event name, as printed");
	tap_ok(t, tracetext_parse_line(ltgid, strlen(ltgid), &ev, &lost) ==
	       TRACETEXT_EVENT && same(ev.comm, ev.comm_len, "my-task-name") &&
	       ev.pid == 77, "tgid column and a comm with dashes");
	tap_ok(t, tracetext_parse_line(lnoflags, strlen(lnoflags), &ev,
				       &lost) == TRACETEXT_EVENT &&
	       ev.ts_ns == 812000900000ULL, "no flags column");
	tap_ok(t, tracetext_parse_line("CPU:0 [LOST 3 EVENTS]", 21, &ev,
				       &lost) == TRACETEXT_LOST && lost == 3,
	       "LOST line");
	tap_ok(t, tracetext_parse_line("# tracer: nop", 13, &ev, &lost) ==
	       TRACETEXT_SKIP, "header skipped");
	tap_ok(t, tracetext_parse_line("garbage [12", 11, &ev, &lost) ==
	       TRACETEXT_GARBAGE, "garbage refused");
	tap_ok(t, tracetext_parse_line("  x-1 [000] d.h1   812.00", 25, &ev,
				       &lost) == TRACETEXT_GARBAGE,
	       "truncated line refused");
}

/* Every prefix of a line (a truncated read) parses or is refused, no crash. */
static void test_prefixes(struct tap *t)
{
	static const char l[] = "          <idle>-0     [000] d.h1   "
		"812.000100: irq_handler_entry: irq=24 name=eth0";
	struct trace_line ev;
	uint64_t lost;
	size_t n, events = 0;

	for (n = 0; n <= strlen(l); n++) {
		char *copy = malloc(n ? n : 1);

		memcpy(copy, l, n);
		if (tracetext_parse_line(copy, n, &ev, &lost) ==
		    TRACETEXT_EVENT)
			events++;
		free(copy);
	}
	tap_ok(t, events > 0 && events < strlen(l), "prefixes: %zu parse", events);
}

/* A cap the window's count is no multiple of: the newest cap, in time order. */
static void test_cut_ring(struct tap *t, const char *text, size_t len)
{
	struct trace_line all[16], some[5];
	struct trace_cut st;
	int all_idx[16], some_idx[5];
	size_t n_all, n, i;
	bool same = true;

	n_all = tracetext_cut(text, len, 0, UINT64_MAX, names, NNAMES, all,
			      all_idx, 16, &st);
	n = tracetext_cut(text, len, 0, UINT64_MAX, names, NNAMES, some,
			  some_idx, 5, &st);
	for (i = 0; n == 5 && n_all >= 5 && i < 5; i++)
		same = same && some[i].ts_ns == all[n_all - 5 + i].ts_ns &&
		       some_idx[i] == all_idx[n_all - 5 + i];
	tap_ok(t, n_all == 12 && n == 5 && same,
	       "a cap of 5 of 12 keeps the last 5 in time order");
	n = tracetext_cut(text, len, 0, UINT64_MAX, names, NNAMES, NULL, NULL,
			  0, &st);
	tap_ok(t, n == 0 && st.in_window == 12, "a cap of 0 keeps none, counts 12");
}

/* The 6.x capture: window cut by time, names filtered, newest kept. */
static void test_cut_6x(struct tap *t)
{
	struct trace_line out[16];
	struct trace_cut st;
	int idx[16];
	size_t len, n;
	char *text = fixture("trace_text_6x.txt", &len);

	if (!tap_ok(t, text != NULL, "6.x fixture read"))
		return;
	n = tracetext_cut(text, len, 11048896230000ULL, 11048897500000ULL,
			  names, NNAMES, out, idx, 16, &st);
	tap_is_u64(t, n, 4, "6.x window: 4 events");
	tap_is_u64(t, st.in_window, 4, "6.x in_window");
	tap_is_u64(t, st.garbage, 0, "6.x no garbage");
	tap_ok(t, n == 4 && !strcmp(names[idx[0]],
				    "irq_vectors:local_timer_entry") &&
	       !strcmp(names[idx[3]], "sched:sched_switch"),
	       "6.x names in time order");
	n = tracetext_cut(text, len, 0, UINT64_MAX, names, NNAMES, out, idx,
			  2, &st);
	tap_ok(t, n == 2 && st.in_window == 12 &&
	       out[1].ts_ns == 11048902496000ULL,
	       "cap keeps the newest events (%zu, %llu)", n,
	       (unsigned long long)st.in_window);
	test_cut_ring(t, text, len);
	free(text);
}

/* The old format: LOST counted, garbage counted, unknown names left out. */
static void test_cut_old(struct tap *t)
{
	struct trace_line out[16];
	struct trace_cut st;
	int idx[16];
	size_t len, n;
	char *text = fixture("trace_text_old.txt", &len);

	if (!tap_ok(t, text != NULL, "old fixture read"))
		return;
	n = tracetext_cut(text, len, 812000100000ULL, 812001000000ULL, names,
			  NNAMES, out, idx, 16, &st);
	tap_is_u64(t, n, 7, "old window: 7 known events");
	tap_is_u64(t, st.lost, 3, "old: LOST 3 counted");
	tap_is_u64(t, st.garbage, 2, "old: garbage and truncated line");
	tap_is_u64(t, st.oldest_ns, 812000100000ULL, "old: oldest event");
	tap_ok(t, n == 7 && same(out[5].comm, out[5].comm_len, "my-task-name"),
	       "old: tgid line in the window");
	n = tracetext_cut(text, len, 812000401000ULL, 812000410000ULL, names,
			  NNAMES, out, idx, 16, &st);
	tap_is_u64(t, n, 2, "old: window edges by us resolution");
	free(text);
}

/*
 * The old fixture cut at every length and with bytes flipped by a fixed
 * pseudo-random sequence: the cutter never reads past the text, never
 * keeps more than asked, and its counts stay consistent.
 */
static void test_mangled(struct tap *t)
{
	struct trace_line out[4];
	struct trace_cut st;
	int idx[4];
	size_t len, n, cut;
	uint32_t x = 12345;
	char *text = fixture("trace_text_old.txt", &len), *copy;
	bool sane = true;
	int round;

	if (!tap_ok(t, text != NULL, "old fixture read for mangling"))
		return;
	for (cut = 0; cut <= len; cut++) {
		copy = malloc(cut ? cut : 1);
		memcpy(copy, text, cut);
		n = tracetext_cut(copy, cut, 0, UINT64_MAX, names, NNAMES, out,
				  idx, 4, &st);
		sane &= n <= 4 && n <= st.in_window &&
			tracetext_trim(copy, cut, UINT64_MAX) <= cut;
		free(copy);
	}
	for (round = 0; round < 2000; round++) {
		copy = malloc(len);
		memcpy(copy, text, len);
		for (n = 0; n < 8; n++) {
			x = x * 1103515245u + 12345u;
			copy[(x >> 8) % len] = (char)(x >> 24);
		}
		n = tracetext_cut(copy, len, 0, UINT64_MAX, names, NNAMES, out,
				  idx, 4, &st);
		sane &= n <= 4 && n <= st.in_window;
		for (cut = 0; cut < n; cut++)
			sane &= out[cut].text >= copy &&
				out[cut].text + out[cut].text_len <= copy + len;
		free(copy);
	}
	tap_ok(t, sane, "truncated and mangled texts: no overrun, counts sane");
	free(text);
}

/*
 * A reader stops once the last whole line it read is an event of the moment
 * it began or later: a part line at the end, a header or a LOST line is not.
 */
static void test_reached(struct tap *t)
{
	size_t len;
	char *text = fixture("trace_text_6x.txt", &len);
	static const char part[] = "  sh-1 [000] d.h.. 10.000001: "
		"local_timer_entry: vector=236\n  sh-1 [000] d.h.. 12.0000";
	static const char lost[] = "  sh-1 [000] d.h.. 10.000001: "
		"local_timer_entry: vector=236\nCPU:0 [LOST 7 EVENTS]\n";

	if (!tap_ok(t, text != NULL, "6.x fixture read for reached"))
		return;
	/* its last line: local_timer_entry at 11048.902496 */
	tap_ok(t, tracetext_reached(text, len, 11048902496000ULL) &&
	       !tracetext_reached(text, len, 11048902497000ULL),
	       "the last event's time decides");
	tap_ok(t, tracetext_reached(part, sizeof(part) - 1, 10000001000ULL) &&
	       !tracetext_reached(part, sizeof(part) - 1, 11000000000ULL),
	       "a part line at the end is not read yet");
	tap_ok(t, !tracetext_reached(lost, sizeof(lost) - 1, 0) &&
	       !tracetext_reached("", 0, 0) &&
	       !tracetext_reached("no newline", 10, 0),
	       "a LOST line, nothing, or no whole line: not reached");
	free(text);
}

/* The state file's text round-trips; a foreign file is refused. */
static void test_state(struct tap *t)
{
	struct tracefs_state st;
	static const char good[] = "rtprobe-trace-state 1\npid 42\n"
		"dir /sys/kernel/tracing\nmounted 0\ntracing_on 1\n"
		"buffer_size_kb 7 (expanded: 1408)\ntrace_clock local\n"
		"current_tracer nop\nevent sched/sched_switch\n"
		"event ../../etc\nevent irq/irq_handler_entry\n";

	tap_ok(t, tracefs_state_parse(good, &st) == 0 && st.pid == 42 &&
	       st.nevents == 2 && !strcmp(st.events[1],
					  "irq/irq_handler_entry") &&
	       !strcmp(st.clock, "local"), "state parsed, '..' refused");
	tap_is_u64(t, tracefs_kb(st.buffer_kb), 1408, "expanded size");
	tap_ok(t, tracefs_state_parse("pid 1\ndir /etc\n", &st) != 0,
	       "foreign state file refused");
}

/* What tracefs_state_save writes, tracefs_state_load reads back. */
static void test_state_file(struct tap *t)
{
	static struct tracefs_state st, back;
	char dir[] = "/tmp/rtprobe-test-XXXXXX", path[256], why[200];

	if (!mkdtemp(dir)) {
		tap_ok(t, false, "mkdtemp %s failed", dir);
		return;
	}
	setenv("RTPROBE_STATE_DIR", dir, 1);
	st.pid = 4242;
	st.mounted = true;
	strcpy(st.dir, "/sys/kernel/debug/tracing");
	strcpy(st.tracing_on, "0");
	strcpy(st.buffer_kb, "1408");
	strcpy(st.clock, "mono");
	strcpy(st.tracer, "nop");
	st.nevents = 2;
	strcpy(st.events[0], "sched/sched_switch");
	strcpy(st.events[1], "timerlat/timerlat_sample");
	tap_ok(t, tracefs_state_save(&st, why, sizeof(why)) == 0,
	       "state saved");
	tap_is_int(t, tracefs_state_load(&back, why, sizeof(why)), 1,
		   "state loaded");
	tap_ok(t, back.pid == 4242 && back.mounted && back.nevents == 2 &&
	       !strcmp(back.dir, st.dir) && !strcmp(back.tracing_on, "0") &&
	       !strcmp(back.buffer_kb, "1408") && !strcmp(back.clock, "mono") &&
	       !strcmp(back.tracer, "nop") &&
	       !strcmp(back.events[1], "timerlat/timerlat_sample"),
	       "every field round-trips");
	tracefs_state_path(path, sizeof(path));
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	struct tap t = { 0, 0 };

	test_lines(&t);
	test_prefixes(&t);
	test_cut_6x(&t);
	test_cut_old(&t);
	test_mangled(&t);
	test_reached(&t);
	test_state(&t);
	test_state_file(&t);
	return tap_done(&t);
}
