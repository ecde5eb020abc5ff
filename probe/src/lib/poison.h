/* SPDX-License-Identifier: MIT */
/*
 * poison.h - the C library calls rtprobe has its own smaller versions of,
 * made compile errors.
 *
 * The Makefile compiles every source with `-include lib/poison.h`, so a new
 * call to one of these fails the build instead of silently linking the C
 * library's version into the static board binaries (musl's printf core or
 * its floating-point scanner alone are 10-15 KiB).  Use instead:
 *   printf family         fmt.h (fmt_printf, fmt_fprintf, fmt_snprintf, ...)
 *   scanf family, strto*, atoi and kin    numtext.h, opt.h
 *   getopt, getopt_long   optparse.h
 *   inet_pton, inet_aton, inet_addr      inaddr.h
 *   strsignal, psignal    the few names needed, written out (engine/state.c)
 *   qsort                 sort.h
 *   log, cos, sqrt        simmath.h (the simulation's only maths)
 * The headers that declare them come first: a poisoned name may not appear
 * even in a declaration after the pragma.  The unit tests (probe/tests) are
 * compiled without it: they compare rtprobe's versions with the C library's.
 */
#ifndef RTP_POISON_H
#define RTP_POISON_H

#include <arpa/inet.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#pragma GCC poison printf fprintf sprintf snprintf dprintf asprintf
#pragma GCC poison vprintf vfprintf vsprintf vsnprintf vdprintf vasprintf
#pragma GCC poison scanf fscanf sscanf vscanf vfscanf vsscanf
#pragma GCC poison strtol strtoll strtoul strtoull strtoimax strtoumax
#pragma GCC poison strtod strtof strtold atoi atol atoll atof
#pragma GCC poison getopt getopt_long getopt_long_only
#pragma GCC poison inet_pton inet_aton inet_addr
#pragma GCC poison strsignal psignal qsort log cos sqrt

#endif /* RTP_POISON_H */
