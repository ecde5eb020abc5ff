/* SPDX-License-Identifier: MIT */
/*
 * optparse.h - rtprobe's own command-line walker (in place of getopt_long).
 *
 * It reads argv[1..argc) the way getopt_long with an optstring starting
 * with ':' does, minus abbreviations:
 *   --name, --name=VALUE, --name VALUE   long options, exact names only
 *   -x, -xVALUE, -x VALUE, -xyz          short options and clusters
 *   --                                   ends the options
 *   -, "", anything else                 a positional argument
 * A value given separately is the next element whatever it holds ("-5",
 * "--", "--json").  Positional arguments before "--" are skipped so that
 * options after them are still read (getopt_long's permutation, without
 * moving argv); `rest` then names the first positional in that order.
 *
 * All state lives in struct opt_parser, which the caller owns.
 */
#ifndef RTP_OPTPARSE_H
#define RTP_OPTPARSE_H

#include <stdbool.h>

/* One long option: its name, the id opt_next() returns, whether it takes a value. */
struct opt_long {
	const char *name;           /* without "--"; NULL ends a table */
	int id;                     /* >= 0 */
	bool takes_value;
};

/* What opt_next() returns when it gives no option id. */
enum opt_status {
	OPT_END = -1,           /* no more options; see rest */
	OPT_UNKNOWN = -2,       /* no such option */
	OPT_MISSING_VALUE = -3, /* an option that takes a value ended argv */
	OPT_UNWANTED_VALUE = -4, /* --flag=VALUE on an option without value */
};

struct opt_parser {
	int argc;
	char *const *argv;
	const struct opt_long *longs;  /* NULL-name terminated; may be NULL */
	const char *shorts;            /* "g:l:Th": a letter, ':' if it takes
					* a value; NULL: none */
	int next;                      /* the next element to read */
	int cluster;                   /* offset in a short cluster; 0: none */
	int rest;                      /* first positional (argc: none) */
	/* The last option read (also set on an error): */
	const char *element;           /* the argv element naming it */
	const struct opt_long *found;  /* its long entry; NULL for short */
	char short_name;               /* its letter; 0 for a long option */
	const char *value;             /* its value; NULL for a flag */
};

/* Start reading argv[1..argc) against the long table and short letters. */
void opt_parser_init(struct opt_parser *p, int argc, char *const *argv,
		     const struct opt_long *longs, const char *shorts);

/* The next option's id, or an enum opt_status; details in *p. */
int opt_next(struct opt_parser *p);

#endif /* RTP_OPTPARSE_H */
