/* SPDX-License-Identifier: MIT */
/*
 * fmt.h - printf-style formatting of rtprobe's own, so that the static board
 * binaries do not carry the C library's printf.
 *
 * musl's printf core (wide characters, positional arguments, long double,
 * hex floats) is 10-13 KiB of a probe that must stay under 200 KiB.  These
 * functions take the subset rtprobe writes, with the same output as the C
 * library for it:
 *   flags  - 0 + space      width and precision as digits or *
 *   length hh h l ll j z t
 *   conversions  d i u x X c s p %  and  f F e E g G  (doubles, exactly
 *   rounded, ties to even, as glibc and musl in the default rounding mode)
 * The compiler checks every call's arguments (format attribute).
 */
#ifndef RTP_FMT_H
#define RTP_FMT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#define FMT_CHECK(f, a) __attribute__((format(__printf__, f, a)))

/* As vsnprintf: at most size - 1 characters and a NUL; returns the full length. */
int fmt_vsnprintf(char *buf, size_t size, const char *format, va_list ap);

/* As snprintf. */
int fmt_snprintf(char *buf, size_t size, const char *format, ...) FMT_CHECK(3, 4);

/* As vfprintf: the length written, or -1 when writing to f failed. */
int fmt_vfprintf(FILE *f, const char *format, va_list ap);

/* As fprintf. */
int fmt_fprintf(FILE *f, const char *format, ...) FMT_CHECK(2, 3);

/* As printf. */
int fmt_printf(const char *format, ...) FMT_CHECK(1, 2);

#endif /* RTP_FMT_H */
