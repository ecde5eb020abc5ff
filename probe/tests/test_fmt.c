// SPDX-License-Identifier: MIT
/*
 * test_fmt.c - rtprobe's own printf (lib/fmt.c) writes what the C library
 * writes: integers, strings and widths, and doubles digit for digit in every
 * f/e/g form, for chosen edge values and for thousands of random ones.  The C
 * library is the oracle: glibc under `make check`, musl under `make check-musl`.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "tap.h"

/* The truncation and NULL cases below are on purpose. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#pragma GCC diagnostic ignored "-Wformat-overflow"

/* Both outputs of one call and their return values. */
struct pair {
	char mine[1024];
	char libc[1024];
	int mine_n;
	int libc_n;
};

/* Fill p by calling fmt_snprintf and snprintf with the same arguments. */
#define BOTH(p, ...) do { \
	(p)->mine_n = fmt_snprintf((p)->mine, sizeof((p)->mine), __VA_ARGS__); \
	(p)->libc_n = snprintf((p)->libc, sizeof((p)->libc), __VA_ARGS__); \
} while (0)

/* True when both wrote the same text and returned the same length. */
static bool same(const struct pair *p)
{
	return p->mine_n == p->libc_n && strcmp(p->mine, p->libc) == 0;
}

/* Report one comparison, showing both texts when they differ. */
static void check(struct tap *t, const struct pair *p, const char *what)
{
	if (!tap_ok(t, same(p), "%s", what))
		tap_diag("mine %d \"%s\", libc %d \"%s\"", p->mine_n, p->mine,
			 p->libc_n, p->libc);
}

/* Integers of every length, sign, base, width, precision and flag. */
static void test_integers(struct tap *t)
{
	struct pair p;

	BOTH(&p, "%d %d %d %i", 0, -1, INT_MIN, INT_MAX);
	check(t, &p, "int extremes");
	BOTH(&p, "%lld %lld %llu", LLONG_MIN, LLONG_MAX, ULLONG_MAX);
	check(t, &p, "long long extremes");
	BOTH(&p, "%ld %lu %zu %zd", LONG_MIN, ULONG_MAX, (size_t)SIZE_MAX, (ssize_t)-3);
	check(t, &p, "long and size_t");
	BOTH(&p, "%hhd %hd %hhu %hu", 300, 70000, 300, 70000);
	check(t, &p, "char and short truncate");
	BOTH(&p, "[%5d|%-5d|%05d|%+d|% d|%+05d|%-+6d]", 42, 42, -42, 42, 42, -7, 9);
	check(t, &p, "widths and flags");
	BOTH(&p, "[%.3d|%8.3d|%-8.3d|%.0d|%.0u|%5.0d]", 7, -7, 7, 0, 0u, 0);
	check(t, &p, "integer precision");
	BOTH(&p, "[%x|%X|%08llx|%#x|%jd|%td]", 0xbeefu, 0xbeefu, 0xabcULL, 0u,
	     (intmax_t)-5, (ptrdiff_t)6);
	check(t, &p, "hex, intmax_t, ptrdiff_t");
	BOTH(&p, "[%*d|%-*d|%*d|%.*d]", 6, 1, 6, 2, -6, 3, 4, 5);
	check(t, &p, "star width and precision");
	BOTH(&p, "%08llu %03llu %9llu %10llu %02d %03d", 12ULL, 5ULL, 123ULL,
	     9ULL, 3, 4);
	check(t, &p, "the zero-padded forms rtprobe uses");
	BOTH(&p, "%p", (void *)&p);
	check(t, &p, "pointer");
}

/* Strings, characters, percent and what snprintf does at its size. */
static void test_text(struct tap *t)
{
	struct pair p;
	const char *null_text = NULL;
	char small_mine[6], small_libc[6];
	int n_mine, n_libc;

	BOTH(&p, "[%s|%10s|%-10s|%.2s|%.*s|%*s|%c|%-3c|%%]", "abc", "abc",
	     "abc", "abc", 4, "abcdef", 5, "x", 'q', 'r');
	check(t, &p, "strings, precision, chars, percent");
	BOTH(&p, "%-6s%9s", "long string", "");
	check(t, &p, "width below the length");
	n_mine = fmt_snprintf(p.mine, sizeof(p.mine), "%.3s|%s", "abcdef",
			      null_text ? null_text : "(null)");
	tap_ok(t, n_mine == 10 && !strcmp(p.mine, "abc|(null)"),
	       "precision cuts a string: %s", p.mine);
	n_mine = fmt_snprintf(p.mine, sizeof(p.mine), "%s", null_text);
	tap_ok(t, n_mine == 6 && !strcmp(p.mine, "(null)"), "NULL string");
	n_mine = fmt_snprintf(small_mine, sizeof(small_mine), "%s-%d", "hello", 12345);
	n_libc = snprintf(small_libc, sizeof(small_libc), "%s-%d", "hello", 12345);
	tap_ok(t, n_mine == n_libc && !strcmp(small_mine, small_libc),
	       "truncated at the size: \"%s\" %d", small_mine, n_mine);
	n_mine = fmt_snprintf(NULL, 0, "%d items", 1000);
	tap_ok(t, n_mine == 10, "size 0 counts without writing (%d)", n_mine);
}

/* Doubles with known hard cases: ties, carries, tiny, huge, specials. */
static void test_double_cases(struct tap *t)
{
	static const double values[] = {
		0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, 0.125, 0.375, 2.675, 1e-5,
		0.0001, 0.00001234, 9.9995, 9.9996, 99.95, 999999.5, 1e15, 1e16,
		1e21, 1e22, 1e23, 123456789.125, 0.1, 0.2, 0.3, 1.0 / 3.0,
		2.0 / 3.0, 33.3, 1e-300, 5e-324, DBL_MIN, DBL_MAX, -DBL_MAX,
		4503599627370496.5, 9007199254740993.0, 1234.5678, 1e100, 0.9999999,
		0.95, 0.05, 0.0005, 0.0015, 1e-7,
	};
	static const char *const formats[] = {
		"%.17g", "%.15g", "%g", "%.3f", "%10.3f", "%.1f", "%.2f", "%f",
		"%.0f", "%e", "%.3e", "%E", "%G", "%#.0f", "%+.2e",
		"%-12.4g|", "%012.3f", "% .5g", "%.0e", "%.1g", "%.40f",
	};
	struct pair p;
	size_t v, f;
	int bad = 0;

	for (f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
		for (v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
			BOTH(&p, formats[f], values[v]);
			if (!same(&p) && bad++ < 5)
				tap_diag("%s of %a: mine \"%s\", libc \"%s\"",
					 formats[f], values[v], p.mine, p.libc);
		}
	}
	tap_ok(t, bad == 0, "edge doubles in %zu formats (%d differ)",
	       sizeof(formats) / sizeof(formats[0]), bad);
	BOTH(&p, "[%f|%e|%g|%F|%5.1f|%-6g|%+g]", INFINITY, -INFINITY, NAN,
	     INFINITY, -INFINITY, INFINITY, INFINITY);
	check(t, &p, "infinities and NaN");
}

/* The next value of a xorshift64 generator. */
static uint64_t next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

/* Random doubles: any bit pattern, and measurement-like values. */
static void test_double_random(struct tap *t)
{
	static const char *const formats[] = {
		"%.17g", "%.15g", "%g", "%.3f", "%.1f", "%e", "%.9e",
	};
	uint64_t state = 0x9e3779b97f4a7c15ULL;
	struct pair p;
	size_t f;
	int i;

	for (f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
		int bad = 0;

		for (i = 0; i < 4000; i++) {
			uint64_t bits = next_random(&state);
			double value;

			if (i % 2) {    /* a count over a power of ten */
				value = (double)(bits >> 20) /
					pow(10.0, (double)(bits % 24));
			} else {
				memcpy(&value, &bits, sizeof(value));
				if (!isfinite(value))
					continue;
			}
			BOTH(&p, formats[f], value);
			if (!same(&p) && bad++ < 3)
				tap_diag("%s of %a: mine \"%s\", libc \"%s\"",
					 formats[f], value, p.mine, p.libc);
		}
		tap_ok(t, bad == 0, "4000 random doubles as %s (%d differ)",
		       formats[f], bad);
	}
}

/* fmt_fprintf writes through its chunk to the stream, longer texts too. */
static void test_stream(struct tap *t)
{
	char long_text[700], mine[1024], libc[1024];
	FILE *f_mine = tmpfile(), *f_libc = tmpfile();
	size_t n_mine, n_libc;
	int r_mine, r_libc;

	if (!f_mine || !f_libc) {
		tap_ok(t, false, "tmpfile for the stream test");
		return;
	}
	memset(long_text, 'x', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	r_mine = fmt_fprintf(f_mine, "head %d [%s] %.3f tail\n", 7, long_text, 2.5);
	r_libc = fprintf(f_libc, "head %d [%s] %.3f tail\n", 7, long_text, 2.5);
	rewind(f_mine);
	rewind(f_libc);
	n_mine = fread(mine, 1, sizeof(mine), f_mine);
	n_libc = fread(libc, 1, sizeof(libc), f_libc);
	tap_ok(t, r_mine == r_libc && n_mine == n_libc && !memcmp(mine, libc, n_mine),
	       "fmt_fprintf of %d characters", r_mine);
	fclose(f_mine);
	fclose(f_libc);
}

int main(void)
{
	struct tap t = { 0 };

	test_integers(&t);
	test_text(&t);
	test_double_cases(&t);
	test_double_random(&t);
	test_stream(&t);
	return tap_done(&t);
}
