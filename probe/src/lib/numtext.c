// SPDX-License-Identifier: MIT
/*
 * numtext.c - integer and plain decimal parsing without scanf or strtod
 * (see numtext.h for why).
 */
#include "numtext.h"

#include <limits.h>
#include <stdint.h>

/* 10^0 .. 10^22: every one is exactly a double. */
static const double pow10_exact[] = {
	1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

const char *numtext_ll(const char *text, long long *out, bool *range)
{
	const char *p = text;
	unsigned long long v = 0, limit = LLONG_MAX;
	bool negative;
	unsigned int d;

	*range = false;
	*out = 0;
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	negative = *p == '-';
	if (*p == '-' || *p == '+')
		p++;
	if (*p < '0' || *p > '9')
		return text;
	limit += negative;
	for (; *p >= '0' && *p <= '9'; p++) {
		d = (unsigned int)(*p - '0');
		if (v > LLONG_MAX / 10 || v * 10 > limit - d)
			*range = true;
		else
			v = v * 10 + d;
	}
	if (*range)
		*out = negative ? LLONG_MIN : LLONG_MAX;
	else
		*out = negative ? (long long)(0 - v) : (long long)v;
	return p;
}

bool numtext_leading_ll(const char *text, long long *out)
{
	long long v;
	bool range;

	if (numtext_ll(text, &v, &range) == text)
		return false;
	*out = v;
	return true;
}

/* m times 10^exp10, one exact power (at most 10^22) at a time. */
static double scale10(double m, int exp10)
{
	while (exp10 > 22) {
		m *= 1e22;
		exp10 -= 22;
	}
	while (exp10 < -22) {
		m /= 1e22;
		exp10 += 22;
	}
	return exp10 >= 0 ? m * pow10_exact[exp10] : m / pow10_exact[-exp10];
}

double numtext_decimal(const char *text)
{
	const char *p = text;
	bool negative = *p == '-';
	uint64_t m = 0;
	int exp10 = 0, digits = 0, zeros = 0;
	bool fraction = false;
	double v;

	if (negative)
		p++;
	/*
	 * Significant digits go into m (at most 19, the rest only move the
	 * point); zeros are held back until a nonzero digit follows, so that
	 * trailing zeros never count as digits.
	 */
	for (; *p; p++) {
		if (*p == '.') {
			fraction = true;
			continue;
		}
		if (*p == '0') {
			if (digits)
				zeros++;
			if (fraction)
				exp10--;
			continue;
		}
		for (; zeros; zeros--) {
			if (digits < 19) {
				m *= 10;
				digits++;
			} else {
				exp10++;
			}
		}
		if (digits < 19) {
			m = m * 10 + (uint64_t)(*p - '0');
			digits++;
		} else {
			exp10++;
		}
		if (fraction)
			exp10--;
	}
	/* Trailing zeros held back: they scale the digits in m. */
	exp10 += zeros;
	v = scale10((double)m, exp10);
	return negative ? -v : v;
}
