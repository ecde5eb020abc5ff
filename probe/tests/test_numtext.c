// SPDX-License-Identifier: MIT
/*
 * test_numtext.c - the scanf/strtod replacements give what the C library
 * gives: integers as strtoll (end, value and ERANGE), leading integers as "%lld", plain decimals bit for bit as strtod
 * (up to 15 significant digits), and the heapsort sorts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numtext.h"
#include "sort.h"
#include "tap.h"

/* Leading integers: blanks skipped, sign taken, no digit is no number. */
static void test_leading(struct tap *t)
{
	static const struct {
		const char *text;
		bool ok;
		long long want;
	} cases[] = {
		{ "   16303200 kB\n", true, 16303200 },
		{ "\t-42x", true, -42 },
		{ "+7", true, 7 },
		{ "0\n", true, 0 },
		{ " kB", false, 0 },
		{ "", false, 0 },
		{ "-", false, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long long got = -1;
		bool ok = numtext_leading_ll(cases[i].text, &got);

		tap_ok(t, ok == cases[i].ok && (!ok || got == cases[i].want),
		       "leading case %zu -> %d %lld", i, ok, got);
	}
}

/* numtext_ll agrees with strtoll(text, &end, 10): value, end and ERANGE. */
static bool same_as_strtoll(const char *text)
{
	long long mine, libc;
	const char *my_end;
	char *libc_end;
	bool range;

	my_end = numtext_ll(text, &mine, &range);
	errno = 0;
	libc = strtoll(text, &libc_end, 10);
	return mine == libc && my_end == libc_end &&
	       range == (errno == ERANGE);
}

/* Fixed texts around every edge, then random digit strings with signs. */
static void test_ll(struct tap *t)
{
	static const char *const fixed[] = {
		"0", "-0", "+0", "42", "-42", "+42", "007", "  12", "\t\n\v\f\r 5",
		"12\n", "12 kB", "12abc", "", " ", "-", "+", "+-1", "-+1", "- 1",
		"x1", "0x10", "1e3", "1.5",
		"9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809",
		"99999999999999999999", "-99999999999999999999",
		"18446744073709551615", "18446744073709551616",
		"000000000000000000000000009223372036854775807",
		"922337203685477580", "9223372036854775806x",
		"4294967295", "4294967296", "2147483648", "-2147483649",
	};
	unsigned long long seed = 2463534242ULL;
	char text[48];
	int i, k, n, bad = 0;

	for (i = 0; i < (int)(sizeof(fixed) / sizeof(fixed[0])); i++)
		tap_ok(t, same_as_strtoll(fixed[i]), "strtoll case %d", i);
	for (i = 0; i < 100000; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		k = 0;
		if (seed & 1)
			text[k++] = ' ';
		if (seed & 2)
			text[k++] = seed & 4 ? '-' : '+';
		for (n = (int)((seed >> 8) % 24); n > 0; n--)
			text[k++] = (char)('0' + (seed >> (n % 40)) % 10);
		if (seed & 8)
			text[k++] = 'z';
		text[k] = '\0';
		if (!same_as_strtoll(text) && bad++ < 5)
			tap_diag("differs from strtoll: '%s'", text);
	}
	tap_ok(t, bad == 0, "100000 random integers as strtoll (%d differ)",
	       bad);
}

/* One decimal text equals strtod's value bit for bit. */
static bool same_as_strtod(const char *text)
{
	double mine = numtext_decimal(text), libc = strtod(text, NULL);

	return !memcmp(&mine, &libc, sizeof(mine));
}

/* Fixed cases, then random ones of up to 15 significant digits. */
static void test_decimal(struct tap *t)
{
	static const char *const fixed[] = {
		"0", "-0", "0.0", "1", "0.1", "0.3", "1000", "1000.000",
		"007.5", "99.99", "1.5", "123456789012345", "0.000123",
		"100000000", "0.1000000000000000000001",
		"4503599627370497", "9007199254740993", "1234567.891",
		"0.0000000000000000000000001",
		"1000000000000000000000000000000",
		"123456789012345678901234567890.5",
	};
	unsigned long long seed = 88172645463325252ULL;
	char text[64];
	int i, bad = 0;

	for (i = 0; i < (int)(sizeof(fixed) / sizeof(fixed[0])); i++)
		tap_ok(t, same_as_strtod(fixed[i]), "'%s' as strtod", fixed[i]);
	for (i = 0; i < 200000; i++) {
		unsigned long long whole, frac;
		int fdigits;

		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		fdigits = (int)(seed % 16);
		whole = (seed >> 8) % 10000000ULL;
		frac = (seed >> 4) % 100000000ULL;
		if (fdigits)
			snprintf(text, sizeof(text), "%s%llu.%0*llu",
				 seed & 1 ? "-" : "", whole % 1000, fdigits > 8 ?
				 8 : fdigits, frac % 100000000ULL);
		else
			snprintf(text, sizeof(text), "%llu", whole);
		if (!same_as_strtod(text) && bad++ < 5)
			tap_diag("differs from strtod: %s", text);
	}
	tap_ok(t, bad == 0, "200000 random decimals as strtod (%d differ)", bad);
}

/* Compare two ints (for sort_heap). */
static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Sorting random arrays of every small length gives ascending order. */
static void test_sort(struct tap *t)
{
	int v[300], n, i, bad = 0;
	unsigned int r = 12345;

	for (n = 0; n <= 300; n++) {
		for (i = 0; i < n; i++) {
			r = r * 1103515245u + 12345u;
			v[i] = (int)(r >> 16) % 50;
		}
		sort_heap(v, (size_t)n, sizeof(v[0]), cmp_int);
		for (i = 1; i < n; i++)
			if (v[i - 1] > v[i])
				bad++;
	}
	tap_ok(t, bad == 0, "sort_heap sorts lengths 0..300 (%d out of order)",
	       bad);
}

int main(void)
{
	struct tap t = { 0, 0 };

	test_ll(&t);
	test_leading(&t);
	test_decimal(&t);
	test_sort(&t);
	return tap_done(&t);
}
