/* SPDX-License-Identifier: MIT */
/*
 * tap.h - tiny Test Anything Protocol helpers for rtprobe's unit tests.
 *
 * Each test program keeps its counters in a struct tap passed around (no
 * global state), prints "ok N - name" / "not ok N - name" lines, and ends
 * with tap_done() which prints the plan "1..N" and returns the exit status.
 */
#ifndef RTP_TAP_H
#define RTP_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct tap {
	int run;
	int failed;
};

/* Record one test result with a printf-style name; returns pass. */
__attribute__((format(printf, 3, 4)))
static inline bool tap_ok(struct tap *t, bool pass, const char *fmt, ...)
{
	va_list ap;

	t->run++;
	if (!pass)
		t->failed++;
	printf("%sok %d - ", pass ? "" : "not ", t->run);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return pass;
}

/* Print a diagnostic line ("# ..."). */
__attribute__((format(printf, 1, 2)))
static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* Compare two unsigned 64-bit values; show both on failure. */
static inline bool tap_is_u64(struct tap *t, uint64_t got, uint64_t want,
			      const char *name)
{
	bool pass = tap_ok(t, got == want, "%s", name);

	if (!pass)
		tap_diag("got %" PRIu64 ", want %" PRIu64, got, want);
	return pass;
}

/* Compare two signed integers; show both on failure. */
static inline bool tap_is_int(struct tap *t, long long got, long long want,
			      const char *name)
{
	bool pass = tap_ok(t, got == want, "%s", name);

	if (!pass)
		tap_diag("got %lld, want %lld", got, want);
	return pass;
}

/* Compare two strings; show both on failure. */
static inline bool tap_is_str(struct tap *t, const char *got,
			      const char *want, const char *name)
{
	bool pass = tap_ok(t, got && want && !strcmp(got, want), "%s", name);

	if (!pass)
		tap_diag("got '%s', want '%s'", got ? got : "(null)",
			 want ? want : "(null)");
	return pass;
}

/* Print the plan and return the process exit status (0 when all passed). */
static inline int tap_done(const struct tap *t)
{
	printf("1..%d\n", t->run);
	if (t->failed)
		tap_diag("%d of %d tests failed", t->failed, t->run);
	return t->failed ? 1 : 0;
}

#endif /* RTP_TAP_H */
