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
#include <stdio.h>

#include "help.h" /* the HELP_* texts the descriptors point at */
#include "optparse.h"

/* Print "rtprobe: --OPTION 'TEXT': REASON" and exit 2. */
__attribute__((noreturn, format(__printf__, 3, 4)))
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
 * Check the whole command line before any option is handled:
 *   - abbreviated long options are refused with a hint naming the full
 *     option ("--dur" for "--duration"): accepting a unique prefix would
 *     let a typo or a future option change meaning silently;
 *   - an option given twice is refused (the second would silently win),
 *     except those named in repeatable (NULL-terminated, may be NULL):
 *     list options whose values add up (--threshold 50us --threshold 1ms).
 * Every "--name" before a lone "--" must be a full name in table, given
 * once; otherwise print one line naming it and exit 2.
 */
void opt_check_args(int argc, char **argv, const struct opt_long *table,
		    const char *const *repeatable);

/* Print "rtprobe: --OPTION 'TEXT': does not apply to WHAT: WHY" and exit 2. */
__attribute__((noreturn))
void opt_refuse(const char *option, const char *text, const char *what,
		const char *why);

/*
 * Option descriptors: one entry per option a command takes, the single
 * source of its option table (optparse.h), its --help lines and its entry in
 * `rtprobe describe --json`.
 */
enum opt_type {
	OPT_FLAG,      /* no value */
	OPT_DURATION,  /* number + unit; bare number in `unit` */
	OPT_INTEGER,   /* decimal integer */
	OPT_NUMBER,    /* decimal number */
	OPT_SIZE,      /* bytes, K/M/G suffixes (1024-based) */
	OPT_CHOICE,    /* one of `choices` */
	OPT_CHOICES,   /* comma list of `choices` */
	OPT_CPULIST,   /* e.g. 0-3,6 */
	OPT_CPU,       /* one CPU number */
	OPT_LIST,      /* comma list of integers or durations */
	OPT_TEXT,      /* free text: a path, command, address */
};

struct opt_desc {
	const char *name;           /* long name without "--"; NULL ends */
	int id;                     /* what opt_next() returns for it */
	enum opt_type type;
	const char *def;            /* default as written; NULL: none or derived */
	const char *help;           /* lines separated by '\n' */
	const char *metavar;        /* shown in --help; NULL: from the type */
	const char *unit;           /* default unit of a bare number (durations) */
	const char *const *choices; /* OPT_CHOICE(S): NULL-terminated */
	char short_name;            /* e.g. 'g' for -g (hackbench only) */
};

/* Name of a type as written in `rtprobe describe --json`. */
const char *opt_type_name(enum opt_type type);

/* Append the descriptors' opt_long entries at out[*n], then a terminator. */
void opt_desc_table(struct opt_long *out, size_t cap, size_t *n,
		    const struct opt_desc *descs);

/* Print the descriptors' --help lines. */
void opt_desc_usage(FILE *f, const struct opt_desc *descs);

/* Find a descriptor by id (NULL if none). */
const struct opt_desc *opt_desc_find(const struct opt_desc *descs, int id);

struct json;
/* Write one JSON object per descriptor into an array the caller opened. */
void opt_desc_json(struct json *j, const struct opt_desc *descs);

/* Format a CPU set as "0-3,6" into buf. */
void opt_cpulist_format(const cpu_set_t *set, char *buf, size_t buflen);

#endif /* RTP_OPT_H */
