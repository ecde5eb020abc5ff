// SPDX-License-Identifier: MIT
/*
 * simmath.c - log by the atanh series, cos by quadrant and Taylor series
 * (see simmath.h for why not the C library's).
 */
#include "simmath.h"

#include <stdint.h>
#include <string.h>

/* ln 2 split so that k * LN2_HI is exact for |k| < 2^11. */
#define LN2_HI 6.93147180369123816490e-01
#define LN2_LO 1.90821492927058770002e-10
#define TWO_PI 6.28318530717958647692
#define SQRT2 1.41421356237309504880

double simmath_log(double x)
{
	uint64_t bits;
	double m, f, s, s2, sum, r;
	int k = 0, n;

	memcpy(&bits, &x, sizeof(bits));
	if (!(bits >> 52)) {	/* subnormal: scale into the normal range */
		x *= 18014398509481984.0;	/* 2^54 */
		memcpy(&bits, &x, sizeof(bits));
		k = -54;
	}
	/* x = 2^k * m with m in [1, 2), then m in [sqrt(1/2), sqrt(2)). */
	k += (int)((bits >> 52) & 0x7ff) - 1023;
	bits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
	memcpy(&m, &bits, sizeof(m));
	if (m > SQRT2) {
		m *= 0.5;
		k++;
	}
	/*
	 * ln m = 2 atanh(s) = 2s + 2s^3 (1/3 + s^2/5 + ...), s = f / (2 + f),
	 * f = m - 1 (exact), |s| < 0.172.  2s = f - s f puts the exact f
	 * first, so rounding errors fall on the small terms only.
	 */
	f = m - 1.0;
	s = f / (2.0 + f);
	s2 = s * s;
	sum = 0.0;
	for (n = 27; n >= 3; n -= 2)
		sum = sum * s2 + 1.0 / n;
	r = (2.0 * s * s2) * sum - s * f;
	return k * LN2_HI + (k * LN2_LO + r + f);
}

/* sin(t) for |t| <= pi/4 (Taylor series to t^19). */
static double sin_small(double t)
{
	double t2 = t * t, term = t, sum = 0.0;
	int n;

	for (n = 1; n <= 19; n += 2) {
		sum += term;
		term *= -t2 / ((n + 1) * (n + 2));
	}
	return sum;
}

/* cos(t) for |t| <= pi/4 (Taylor series to t^20). */
static double cos_small(double t)
{
	double t2 = t * t, term = 1.0, sum = 0.0;
	int n;

	for (n = 0; n <= 20; n += 2) {
		sum += term;
		term *= -t2 / ((n + 1) * (n + 2));
	}
	return sum;
}

double simmath_cos_turn(double u)
{
	/* u = q/4 + r, |r| <= 1/8: the angle is q quarter turns plus 2 pi r. */
	int q = (int)(u * 4.0 + 0.5);
	double t = TWO_PI * (u - q * 0.25);

	switch (q & 3) {
	case 0:
		return cos_small(t);
	case 1:
		return -sin_small(t);
	case 2:
		return -cos_small(t);
	default:
		return sin_small(t);
	}
}

/*
 * x = m * 2^e with an integer m < 2^53 and e even (m doubled if not), so
 * sqrt(x) = sqrt(m * 2^s) * 2^((e - s) / 2) for an even shift s that gives
 * the root 54 bits: 53 and a rounding bit.  The root is taken one bit at a
 * time (two radicand bits in, one root bit out); the remainder, at most
 * twice the root, fits 64 bits.  A remainder left over is the sticky bit.
 */
double simmath_sqrt(double x)
{
	uint64_t bits, m, root = 0, rem = 0;
	int e, shift, top, i;

	memcpy(&bits, &x, sizeof(bits));
	if (bits == 0 || bits >> 63 || (bits >> 52) >= 0x7ff)
		return x;       /* zero, and what the probe never asks for */
	m = bits & ((1ULL << 52) - 1);
	e = (int)(bits >> 52);
	if (e) {
		m |= 1ULL << 52;
		e -= 1075;
	} else {
		e = -1074;
	}
	if (e & 1) {
		m <<= 1;
		e--;
	}
	for (top = 63; !(m >> top); top--)
		;
	/* the radicand m * 2^shift has 107 or 108 bits: a 54-bit root */
	shift = 106 - top;
	shift += shift & 1;
	for (i = 53; i >= 0; i--) {
		/* radicand bits 2i+1 and 2i: m's bits 2i+1-shift and 2i-shift */
		int lo = 2 * i - shift;
		uint64_t pair = lo >= 0 ? (m >> lo) & 3 : lo == -1 ? (m << 1) & 3 : 0;
		uint64_t trial;

		rem = (rem << 2) | pair;
		trial = (root << 2) | 1;
		root <<= 1;
		if (rem >= trial) {
			rem -= trial;
			root |= 1;
		}
	}
	/* root has 54 bits; halve it to 53 with round to nearest, ties to even */
	if ((root & 1) && (rem || (root & 2)))
		root += 2;
	root >>= 1;
	e = (e - shift) / 2 + 1;        /* the dropped rounding bit */
	if (root >> 53) {
		root >>= 1;
		e++;
	}
	/* root in [2^52, 2^53): the value root * 2^e with e + 52 the exponent */
	bits = ((uint64_t)(e + 52 + 1023) << 52) | (root & ((1ULL << 52) - 1));
	memcpy(&x, &bits, sizeof(x));
	return x;
}

