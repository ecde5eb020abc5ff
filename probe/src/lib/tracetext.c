// SPDX-License-Identifier: MIT
/*
 * tracetext.c - the kernel's text trace, parsed by hand (see tracetext.h).
 */
#include "tracetext.h"

#include <stdbool.h>
#include <string.h>

/* True for an ASCII decimal digit. */
static bool tt_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* Parse decimal digits at p[0..n) into *v; the count of digits taken. */
static size_t tt_number(const char *p, size_t n, uint64_t *v)
{
	size_t i = 0;

	*v = 0;
	while (i < n && tt_digit(p[i]) && i < 19) {
		*v = *v * 10 + (uint64_t)(p[i] - '0');
		i++;
	}
	return i;
}

/* "CPU:<n> [LOST <m> EVENTS]": set *lost to m and return true. */
static bool tt_lost(const char *line, size_t len, uint64_t *lost)
{
	const char *p = memchr(line, '[', len);
	size_t n;

	if (len < 4 || memcmp(line, "CPU:", 4) || !p)
		return false;
	n = len - (size_t)(p - line);
	if (n < 7 || memcmp(p, "[LOST ", 6))
		return false;
	return tt_number(p + 6, n - 6, lost) > 0;
}

/*
 * Find the CPU field " [<digits>] " in line; its offset of '[' or -1.  The
 * first one after a "-<digits>" (the pid) is taken, so a comm holding
 * brackets does not fool it.
 */
static long tt_cpu_field(const char *line, size_t len)
{
	size_t i, k;

	for (i = 1; i + 3 < len; i++) {
		if (line[i] != '[' || line[i - 1] != ' ')
			continue;
		for (k = i + 1; k < len && tt_digit(line[k]); k++)
			;
		if (k == i + 1 || k + 1 >= len || line[k] != ']' ||
		    line[k + 1] != ' ')
			continue;
		return (long)i;
	}
	return -1;
}

/* Split "<comm>-<pid> [(<tgid>)]" (trimmed) into out's comm and pid. */
static bool tt_task(const char *p, size_t n, struct trace_line *out)
{
	uint64_t pid;
	size_t i;

	while (n && p[0] == ' ')
		p++, n--;
	while (n && p[n - 1] == ' ')
		n--;
	if (n && p[n - 1] == ')') {
		for (i = n - 1; i > 0 && p[i] != '('; i--)
			;
		if (i == 0)
			return false;
		n = i;
		while (n && p[n - 1] == ' ')
			n--;
	}
	for (i = n; i > 0 && p[i - 1] != '-'; i--)
		;
	if (i == 0 || i == n || tt_number(p + i, n - i, &pid) != n - i ||
	    pid > 0x7fffffff)
		return false;
	out->comm = p;
	out->comm_len = i - 1;
	out->pid = (int)pid;
	return true;
}

/*
 * Parse "<sec>.<frac>:" at p; the ns value into out and the bytes taken
 * (0 when p does not start with a timestamp).
 */
static size_t tt_timestamp(const char *p, size_t n, struct trace_line *out)
{
	uint64_t sec, frac, scale = 1;
	size_t a, b, i;

	a = tt_number(p, n, &sec);
	if (!a || a + 1 >= n || p[a] != '.')
		return 0;
	b = tt_number(p + a + 1, n - a - 1, &frac);
	if (!b || b > 9 || a + 1 + b >= n || p[a + 1 + b] != ':')
		return 0;
	for (i = b; i < 9; i++)
		scale *= 10;
	out->ts_ns = sec * 1000000000ULL + frac * scale;
	out->resolution_ns = scale;
	return a + 1 + b + 1;
}

enum tracetext_kind tracetext_parse_line(const char *line, size_t len,
					 struct trace_line *out,
					 uint64_t *lost)
{
	const char *p, *end = line + len;
	uint64_t cpu;
	size_t n, k;
	long b;

	while (len && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		len--, end--;
	for (n = 0; n < len && line[n] == ' '; n++)
		;
	if (n == len || line[n] == '#')
		return TRACETEXT_SKIP;
	if (tt_lost(line, len, lost))
		return TRACETEXT_LOST;
	memset(out, 0, sizeof(*out));
	b = tt_cpu_field(line, len);
	if (b < 0 || !tt_task(line, (size_t)b, out))
		return TRACETEXT_GARBAGE;
	p = line + b + 1;
	p += tt_number(p, (size_t)(end - p), &cpu);
	out->cpu = (int)cpu;
	p += 2; /* "] " */
	while (p < end && *p == ' ')
		p++;
	k = tt_timestamp(p, (size_t)(end - p), out);
	if (!k) {
		/* the flags column: skip one word */
		while (p < end && *p != ' ')
			p++;
		while (p < end && *p == ' ')
			p++;
		k = tt_timestamp(p, (size_t)(end - p), out);
		if (!k)
			return TRACETEXT_GARBAGE;
	}
	p += k;
	while (p < end && *p == ' ')
		p++;
	out->event = p;
	while (p < end && *p != ':' && *p != ' ')
		p++;
	if (p == end || *p != ':' || p == out->event)
		return TRACETEXT_GARBAGE;
	out->event_len = (size_t)(p - out->event);
	p++;
	if (p < end && *p == ' ')
		p++;
	out->text = p;
	out->text_len = (size_t)(end - p);
	return TRACETEXT_EVENT;
}

int tracetext_name_index(const char *const *names, int nnames,
			 const char *ev, size_t ev_len)
{
	const char *colon;
	int i;

	for (i = 0; i < nnames; i++) {
		colon = strchr(names[i], ':');
		if (colon && strlen(colon + 1) == ev_len &&
		    !memcmp(colon + 1, ev, ev_len))
			return i;
	}
	return -1;
}

/* True when ev falls in [start, end] given the text's resolution. */
static bool tt_in_window(const struct trace_line *ev, uint64_t start_ns,
			 uint64_t end_ns)
{
	return ev->ts_ns + ev->resolution_ns > start_ns && ev->ts_ns <= end_ns;
}

/*
 * Walk the lines of text once: count into st and keep the window's events in
 * out[] as a ring of cap (event k at k % cap).  Returns how many the window
 * had.
 */
static uint64_t tt_walk(const char *text, size_t len, uint64_t start_ns,
			uint64_t end_ns, const char *const *names, int nnames,
			struct trace_line *out, int *out_name, size_t cap,
			struct trace_cut *st)
{
	const char *p = text, *end = text + len, *nl;
	struct trace_line ev;
	uint64_t lost = 0;
	int idx;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		switch (tracetext_parse_line(p, (size_t)(nl - p), &ev, &lost)) {
		case TRACETEXT_EVENT:
			if (!st->oldest_ns)
				st->oldest_ns = ev.ts_ns;
			if (!tt_in_window(&ev, start_ns, end_ns))
				break;
			idx = tracetext_name_index(names, nnames, ev.event,
						   ev.event_len);
			if (idx < 0)
				break;
			if (cap) {
				out[st->in_window % cap] = ev;
				out_name[st->in_window % cap] = idx;
			}
			st->in_window++;
			break;
		case TRACETEXT_LOST:
			st->lost += lost;
			break;
		case TRACETEXT_GARBAGE:
			st->garbage++;
			break;
		default:
			break;
		}
		p = nl + 1;
	}
	return st->in_window;
}

/* Reverse out[lo..hi) and out_name[lo..hi) in place. */
static void tt_reverse(struct trace_line *out, int *out_name, size_t lo,
		       size_t hi)
{
	struct trace_line ev;
	int name;

	while (lo + 1 < hi) {
		hi--;
		ev = out[lo];
		out[lo] = out[hi];
		out[hi] = ev;
		name = out_name[lo];
		out_name[lo] = out_name[hi];
		out_name[hi] = name;
		lo++;
	}
}

size_t tracetext_cut(const char *text, size_t len, uint64_t start_ns,
		     uint64_t end_ns, const char *const *names, int nnames,
		     struct trace_line *out, int *out_name, size_t cap,
		     struct trace_cut *st)
{
	uint64_t seen;
	size_t oldest;

	memset(st, 0, sizeof(*st));
	seen = tt_walk(text, len, start_ns, end_ns, names, nnames, out,
		       out_name, cap, st);
	if (seen <= cap)
		return (size_t)seen;
	if (!cap)
		return 0;
	/* the ring wrapped: rotate its oldest event (at seen % cap) to the front */
	oldest = (size_t)(seen % cap);
	tt_reverse(out, out_name, 0, oldest);
	tt_reverse(out, out_name, oldest, cap);
	tt_reverse(out, out_name, 0, cap);
	return cap;
}

size_t tracetext_trim(const char *text, size_t len, uint64_t cutoff_ns)
{
	const char *p = text, *end = text + len, *nl;
	struct trace_line ev;
	uint64_t lost;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;
		if (tracetext_parse_line(p, (size_t)(nl - p), &ev, &lost) ==
		    TRACETEXT_EVENT && ev.ts_ns >= cutoff_ns)
			return (size_t)(p - text);
		p = nl + 1;
	}
	return (size_t)(p - text);
}

bool tracetext_reached(const char *text, size_t len, uint64_t ts_ns)
{
	const char *end = text + len, *start;
	struct trace_line ev;
	uint64_t lost;

	while (end > text && end[-1] != '\n')
		end--;  /* a part line at the end: not whole yet */
	if (end == text)
		return false;
	end--;  /* the last whole line's newline */
	start = end;
	while (start > text && start[-1] != '\n')
		start--;
	return tracetext_parse_line(start, (size_t)(end - start), &ev, &lost) ==
	       TRACETEXT_EVENT && ev.ts_ns >= ts_ns;
}

uint64_t tracetext_lost(const char *text, size_t len)
{
	const char *p = text, *end = text + len, *nl;
	uint64_t lost, sum = 0;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (*p == 'C' && tt_lost(p, (size_t)(nl - p), &lost))
			sum += lost;
		p = nl + 1;
	}
	return sum;
}
