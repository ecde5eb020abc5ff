/* SPDX-License-Identifier: MIT */
/*
 * simmath.h - the natural log and cos(2 pi u) the latency simulation draws
 * with, in a few hundred bytes.
 *
 * The C library's log and cos bring lookup tables and a large-argument
 * reduction (about 10 KiB in a static board probe); the simulation only
 * needs log of u in (0, 1] and the cosine of a full turn's fraction u in
 * [0, 1).  log is within 1 unit in the last place, cos within 1e-15, so
 * llround of the scaled draws agrees with the C library's for all but
 * values within ~1e-12 of a half nanosecond.
 */
#ifndef RTP_SIMMATH_H
#define RTP_SIMMATH_H

/* ln(x) for a positive finite x. */
double simmath_log(double x);

/* cos(2 pi u) for u in [0, 1). */
double simmath_cos_turn(double u);

/*
 * The square root of a non-negative finite x, correctly rounded (as the C
 * library's sqrt), in integer arithmetic: the compiler runtime's sqrt keeps
 * 26 KiB of unrelated tables in the PowerPC probe.
 */
double simmath_sqrt(double x);

#endif /* RTP_SIMMATH_H */
