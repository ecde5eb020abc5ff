// SPDX-License-Identifier: MIT
/*
 * test_softfloat_compare.c - the PowerPC probe's soft-float comparisons
 * (port/softfloat_compare.c) answer as the host's FPU does, for signed zeros,
 * infinities, NaNs, subnormals and random doubles of every magnitude.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../port/softfloat_compare.c"
#include "tap.h"

/* Count the comparisons of a and b that disagree with the hardware's. */
static int disagreements(double a, double b)
{
	return ((__ltdf2(a, b) < 0) != (a < b)) + ((__ledf2(a, b) <= 0) != (a <= b)) +
	       ((__gtdf2(a, b) > 0) != (a > b)) + ((__gedf2(a, b) >= 0) != (a >= b)) +
	       ((__eqdf2(a, b) == 0) != (a == b)) + ((__nedf2(a, b) != 0) != (a != b)) +
	       ((__cmpdf2(a, b) <= 0) != (a <= b)) +
	       ((__unorddf2(a, b) != 0) != isunordered(a, b));
}

int main(void)
{
	static const double special[] = {
		0.0, -0.0, 1.0, -1.0, INFINITY, -INFINITY, NAN, -NAN, DBL_MIN, -DBL_MIN,
		5e-324, -5e-324, DBL_MAX, -DBL_MAX, 0.5, 2.0, -2.0, 1e-300, -1e300,
	};
	const size_t n = sizeof(special) / sizeof(special[0]);
	struct tap t = { 0, 0 };
	uint64_t state = 99;
	size_t i, j;
	int bad = 0;

	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++)
			bad += disagreements(special[i], special[j]);
	tap_ok(&t, bad == 0, "special values pairwise (%d disagree)", bad);
	bad = 0;
	for (i = 0; i < 1000000; i++) {
		uint64_t x = (state += 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;
		uint64_t y = x ^ (x >> 31) ^ (i % 3 ? 0 : 1);  /* neighbours too */
		double a, b;

		memcpy(&a, &x, sizeof(a));
		memcpy(&b, &y, sizeof(b));
		bad += disagreements(a, b) + disagreements(b, a) + disagreements(a, a);
	}
	tap_ok(&t, bad == 0, "a million random pairs (%d disagree)", bad);
	return tap_done(&t);
}
