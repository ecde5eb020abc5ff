// SPDX-License-Identifier: MIT
/*
 * test_simmath.c - the simulation's own log and cos(2 pi u) stay within
 * 1 ulp (log) and 1e-15 (cos) of the C library's over the draws the
 * simulation makes, and the rounded latencies they give are the same.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "simmath.h"
#include "tap.h"

/* Distance of a and b in units in the last place (same sign assumed). */
static uint64_t ulps(double a, double b)
{
	int64_t ia, ib;

	memcpy(&ia, &a, sizeof(ia));
	memcpy(&ib, &b, sizeof(ib));
	return ia > ib ? (uint64_t)(ia - ib) : (uint64_t)(ib - ia);
}

/* A uniform draw in (0, 1) as the simulation makes it. */
static double draw(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return ((double)(z >> 11) + 0.5) / 9007199254740992.0;
}

/* simmath_sqrt is the C library's sqrt, bit for bit: any finite positive bits and edges. */
static void test_sqrt(struct tap *t)
{
	static const double edges[] = {
		0.0, 1.0, 2.0, 4.0, 0.25, 3.0, 1e-300, 5e-324, 1e-310, 1.7976931348623157e308,
		2.2250738585072014e-308, 9007199254740993.0, 0.5, 1e16, 123456.789,
	};
	uint64_t state = 7, bits;
	long differ = 0;
	size_t k;
	int i;

	for (k = 0; k < sizeof(edges) / sizeof(edges[0]); k++)
		tap_ok(t, simmath_sqrt(edges[k]) == sqrt(edges[k]), "sqrt(%a)", edges[k]);
	for (i = 0; i < 1000000; i++) {
		double x;

		state += 0x9e3779b97f4a7c15ULL;
		bits = (state ^ (state >> 29)) * 0xbf58476d1ce4e5b9ULL;
		bits &= ~(1ULL << 63);          /* positive */
		memcpy(&x, &bits, sizeof(x));
		if (!isfinite(x))
			continue;
		if (i % 2)
			x = -2.0 * log(draw(&state)) * 1e6;   /* the simulation's use */
		if (simmath_sqrt(x) != sqrt(x) && differ++ < 3)
			tap_diag("sqrt(%a): %a, libc %a", x, simmath_sqrt(x), sqrt(x));
	}
	tap_ok(t, differ == 0, "sqrt of a million values as the C library's (%ld differ)",
	       differ);
}

int main(void)
{
	struct tap t = { 0, 0 };
	uint64_t state = 42, worst_log = 0, u;
	double worst_cos_abs = 0;
	long rounding_differs = 0;
	int i;

	for (i = 0; i < 2000000; i++) {
		double u1 = draw(&state), u2 = draw(&state);
		double l = simmath_log(u1), c = simmath_cos_turn(u2);
		double want_c = cos(2.0 * M_PI * u2);
		uint64_t d = ulps(l, log(u1));

		if (d > worst_log)
			worst_log = d;
		/* absolute: near a zero of cos the rounding of 2 pi u2 dominates */
		if (fabs(c - want_c) > worst_cos_abs)
			worst_cos_abs = fabs(c - want_c);
		if (llround(-30000.0 * l) != llround(-30000.0 * log(u1)) ||
		    llround(20000.0 + 5000.0 * sqrt(-2.0 * l) * c) !=
		    llround(20000.0 + 5000.0 * sqrt(-2.0 * log(u1)) * want_c))
			rounding_differs++;
	}
	tap_ok(&t, worst_log <= 2, "log within 2 ulp (worst %llu)",
	       (unsigned long long)worst_log);
	tap_ok(&t, worst_cos_abs <= 1e-15, "cos within 1e-15 (worst %g)",
	       worst_cos_abs);
	tap_ok(&t, rounding_differs == 0,
	       "rounded draws as the C library's (%ld differ)", rounding_differs);
	for (u = 0; u < 8; u++)
		tap_ok(&t, fabs(simmath_cos_turn((double)u / 8) -
				cos(2.0 * M_PI * (double)u / 8)) < 1e-15,
		       "cos of %llu/8 turn", (unsigned long long)u);
	tap_ok(&t, simmath_log(1.0) == 0.0, "log 1 is 0");
	tap_ok(&t, ulps(simmath_log(5e-324), log(5e-324)) <= 2,
	       "log of the smallest subnormal");
	tap_ok(&t, ulps(simmath_log(1e300), log(1e300)) <= 2, "log 1e300");
	test_sqrt(&t);
	return tap_done(&t);
}
