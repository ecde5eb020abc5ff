/* SPDX-License-Identifier: MIT */
/*
 * opt.h - strict parsing of option values.
 *
 * Every parser here either returns a valid value or prints exactly one line
 *   rtprobe: --OPTION 'TEXT': REASON
 * to stderr and exits with RTP_EXIT_USAGE (2).  Nothing is measured before all
 * options are parsed, so exiting from the parser is safe.
 *
 * Durations: an integer or decimal number followed by a unit, one of
 *   ns us ms s m h d
 * e.g. "1000us", "1.5ms", "5s", "2h".  A bare number takes the option's
 * documented default unit (passed by the caller, e.g. "us" for --interval,
 * "s" for --duration).  Results are exact integer nanoseconds; a value that is
 * not a whole number of nanoseconds, negative, or overflows 64 bits is refused.
 *
 * CPU lists: "0-3,6" style; each CPU must be < CPU_SETSIZE.  Whether the CPUs
 * are online/allowed is checked by opt_cpulist_allowed().
 *
 * The *_try variants do not exit: they return 0 on success and -1 with a
 * reason written to err (errlen bytes) so they can be unit tested and reused.
 */
#ifndef RTP_OPT_H
#define RTP_OPT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stddef.h>
#include <stdint.h>

/* Print "rtprobe: --OPTION 'TEXT': REASON" and exit 2. */
__attribute__((noreturn, format(printf, 3, 4)))
void opt_fail(const char *option, const char *text, const char *fmt, ...);

/* Parse a duration; bare numbers use default_unit ("ns".."d"). */
int opt_duration_try(const char *text, const char *default_unit,
		     uint64_t *out_ns, char *err, size_t errlen);
uint64_t opt_duration(const char *option, const char *text,
		      const char *default_unit);

/* Parse an unsigned integer in [min, max] (decimal only). */
int opt_u64_try(const char *text, uint64_t min, uint64_t max, uint64_t *out,
		char *err, size_t errlen);
uint64_t opt_u64(const char *option, const char *text, uint64_t min,
		 uint64_t max);

/* Parse a decimal number (e.g. "12.5") in [min, max]; no NaN/inf/exponents. */
int opt_double_try(const char *text, double min, double max, double *out,
		   char *err, size_t errlen);
double opt_double(const char *option, const char *text, double min,
		  double max);

/* Parse a byte size: number with optional K/KiB/M/MiB/G/GiB suffix (1024-based). */
int opt_size_try(const char *text, uint64_t *out_bytes, char *err,
		 size_t errlen);
uint64_t opt_size(const char *option, const char *text);

/* Return the index of text in the NULL-terminated choices, or fail listing them. */
int opt_choice(const char *option, const char *text,
	       const char *const choices[]);

/* Parse a CPU list like "0-3,6" into set. */
int opt_cpulist_try(const char *text, cpu_set_t *set, char *err,
		    size_t errlen);
void opt_cpulist(const char *option, const char *text, cpu_set_t *set);

/* Fail unless every CPU in set is in the process's allowed set (sched_getaffinity). */
void opt_cpulist_allowed(const char *option, const char *text,
			 const cpu_set_t *set);

/*
 * Refuse abbreviated long options: getopt_long accepts any unique prefix
 * ("--dur" for "--duration"), which lets a typo or a future option change
 * meaning silently.  Every "--name" before a lone "--" must be a full name in
 * table; otherwise print one line naming it (and the option it abbreviates)
 * and exit 2.  Call before the getopt_long loop.
 */
struct option;
void opt_refuse_abbrev(int argc, char **argv, const struct option *table);

/* Format a CPU set as "0-3,6" into buf. */
void opt_cpulist_format(const cpu_set_t *set, char *buf, size_t buflen);

#endif /* RTP_OPT_H */
