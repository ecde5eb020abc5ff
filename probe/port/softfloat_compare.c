// SPDX-License-Identifier: MIT
/*
 * softfloat_compare.c - the soft-float double comparisons (__eqdf2 and its
 * kin, the libgcc names the compiler calls for a < b on a CPU without an FPU).
 *
 * Zig's compiler runtime has them too, but for PowerPC its compiler merges
 * all the runtime's constant tables (mostly 128-bit float maths rtprobe never
 * calls) into one 26 KiB block, kept whole because the comparison code reads
 * two constants from it.  These definitions replace the runtime's weak ones,
 * and the block is no longer linked.
 *
 * Linked only into the soft-float PowerPC probe (rtbench/probebuild.py).
 */
#include <stdint.h>
#include <string.h>

int __eqdf2(double a, double b);
int __nedf2(double a, double b);
int __ltdf2(double a, double b);
int __ledf2(double a, double b);
int __gtdf2(double a, double b);
int __gedf2(double a, double b);
int __cmpdf2(double a, double b);
int __unorddf2(double a, double b);

/* True when the bits are a NaN's. */
static int is_nan(uint64_t bits)
{
	return (bits & ~(1ULL << 63)) > 0x7ff0000000000000ULL;
}

/*
 * -1, 0 or 1 as a is below, equal to or above b; unordered when either is a
 * NaN.  Doubles order as their bits read as sign and magnitude: a negative
 * one's magnitude is turned into a negative integer.
 */
static int compare(double a, double b, int unordered)
{
	uint64_t ua, ub;
	int64_t ka, kb;

	memcpy(&ua, &a, sizeof(ua));
	memcpy(&ub, &b, sizeof(ub));
	if (is_nan(ua) || is_nan(ub))
		return unordered;
	if (((ua | ub) << 1) == 0)
		return 0;       /* +0 and -0 */
	ka = ua >> 63 ? -(int64_t)(ua & ~(1ULL << 63)) : (int64_t)ua;
	kb = ub >> 63 ? -(int64_t)(ub & ~(1ULL << 63)) : (int64_t)ub;
	return ka < kb ? -1 : ka > kb;
}

/* Zero when equal (a NaN is unequal to everything). */
int __eqdf2(double a, double b)
{
	return compare(a, b, 1);
}

int __nedf2(double a, double b)
{
	return compare(a, b, 1);
}

/* Negative when a < b (not with a NaN). */
int __ltdf2(double a, double b)
{
	return compare(a, b, 1);
}

/* At most zero when a <= b (not with a NaN). */
int __ledf2(double a, double b)
{
	return compare(a, b, 1);
}

int __cmpdf2(double a, double b)
{
	return compare(a, b, 1);
}

/* Positive when a > b (not with a NaN). */
int __gtdf2(double a, double b)
{
	return compare(a, b, -1);
}

/* At least zero when a >= b (not with a NaN). */
int __gedf2(double a, double b)
{
	return compare(a, b, -1);
}

/* Nonzero when a or b is a NaN. */
int __unorddf2(double a, double b)
{
	uint64_t ua, ub;

	memcpy(&ua, &a, sizeof(ua));
	memcpy(&ub, &b, sizeof(ub));
	return is_nan(ua) || is_nan(ub);
}
