// SPDX-License-Identifier: MIT
/*
 * opt.c - strict parsing of option values (see opt.h).
 */
#include "opt.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "json.h"
#include "numtext.h"
#include "rtprobe.h"
#include "text.h"

struct unit {
	const char *name;
	uint64_t factor;
};

static const struct unit duration_units[] = {
	{ "ns", 1ULL },
	{ "us", 1000ULL },
	{ "ms", 1000000ULL },
	{ "s", 1000000000ULL },
	{ "m", 60ULL * 1000000000ULL },
	{ "h", 3600ULL * 1000000000ULL },
	{ "d", 86400ULL * 1000000000ULL },
	{ NULL, 0 },
};

static const struct unit size_units[] = {
	{ "", 1ULL },
	{ "B", 1ULL },
	{ "K", 1ULL << 10 }, { "KiB", 1ULL << 10 }, { "k", 1ULL << 10 },
	{ "M", 1ULL << 20 }, { "MiB", 1ULL << 20 },
	{ "G", 1ULL << 30 }, { "GiB", 1ULL << 30 },
	{ "T", 1ULL << 40 }, { "TiB", 1ULL << 40 },
	{ NULL, 0 },
};

/* Write a formatted reason into err (if any) and return -1. */
__attribute__((format(__printf__, 3, 4)))
static int set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		fmt_vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Print the one-line option error and exit 2. */
void opt_fail(const char *option, const char *text, const char *fmt, ...)
{
	char reason[256];
	va_list ap;

	va_start(ap, fmt);
	fmt_vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	fmt_fprintf(stderr, "rtprobe: %s%s '%s': %s\n",
		    option[0] == '-' ? "" : "--", option, text ? text : "", reason);
	exit(RTP_EXIT_USAGE);
}

/* Look a unit name up in a table; NULL when unknown. */
static const struct unit *find_unit(const struct unit *units, const char *name)
{
	for (; units->name; units++)
		if (!strcmp(units->name, name))
			return units;
	return NULL;
}

/* List a unit table's names, comma separated, into buf. */
static void list_units(const struct unit *units, char *buf, size_t buflen)
{
	size_t len = 0;

	buf[0] = '\0';
	for (; units->name; units++) {
		if (!units->name[0])
			continue;
		len += (size_t)fmt_snprintf(buf + len, len < buflen ? buflen - len : 0,
					    "%s%s", len ? " " : "", units->name);
		if (len >= buflen)
			break;
	}
}

/*
 * Parse "DIGITS[.DIGITS]" at *pp exactly: the integer part into *ip, the
 * fraction as an integer *fp over the power of ten *fscale (trailing zeros
 * dropped).  Advances *pp past the number.
 */
static int parse_decimal(const char **pp, uint64_t *ip, uint64_t *fp,
			 uint64_t *fscale, char *err, size_t errlen)
{
	const char *p = *pp;
	uint64_t ipart = 0, fpart = 0, scale = 1;
	int ndig = 0;

	if (*p == '-')
		return set_err(err, errlen, "must not be negative");
	if (*p < '0' || *p > '9')
		return set_err(err, errlen, "expected a number");
	for (; *p >= '0' && *p <= '9'; p++) {
		if (__builtin_mul_overflow(ipart, 10, &ipart) ||
		    __builtin_add_overflow(ipart, (uint64_t)(*p - '0'), &ipart))
			return set_err(err, errlen, "number too large");
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return set_err(err, errlen,
				       "expected digits after the decimal point");
		for (; *p >= '0' && *p <= '9'; p++) {
			if (++ndig > 18)
				return set_err(err, errlen,
					       "too many decimal places");
			fpart = fpart * 10 + (uint64_t)(*p - '0');
			scale *= 10;
		}
		while (scale > 1 && fpart % 10 == 0) {
			fpart /= 10;
			scale /= 10;
		}
	}
	*pp = p;
	*ip = ipart;
	*fp = fpart;
	*fscale = scale;
	return 0;
}

/* Greatest common divisor of a and b (b > 0). */
static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t r = a % b;

		a = b;
		b = r;
	}
	return a;
}

/*
 * Combine a parsed decimal with a unit factor into an exact integer:
 * ipart * factor + fpart * factor / fscale, refusing inexact or too large
 * results.  what names the result unit for the error ("nanoseconds").
 * The fraction is reduced first (fpart/fscale in lowest terms is a/s), so
 * it is whole exactly when s divides factor; no 128-bit arithmetic, which
 * 32-bit targets lack.
 */
static int scale_exact(uint64_t ipart, uint64_t fpart, uint64_t fscale,
		       uint64_t factor, const char *what, uint64_t *out,
		       char *err, size_t errlen)
{
	uint64_t whole, frac, g;

	if (__builtin_mul_overflow(ipart, factor, &whole))
		return set_err(err, errlen, "value too large");
	g = gcd_u64(fpart, fscale);
	if (factor % (fscale / g))
		return set_err(err, errlen, "not a whole number of %s", what);
	if (__builtin_mul_overflow(fpart / g, factor / (fscale / g), &frac))
		return set_err(err, errlen, "value too large");
	if (__builtin_add_overflow(whole, frac, out))
		return set_err(err, errlen, "value too large");
	return 0;
}

/* Parse a duration into exact nanoseconds; -1 with err on bad input. */
int opt_duration_try(const char *text, const char *default_unit,
		     uint64_t *out_ns, char *err, size_t errlen)
{
	const char *p = text;
	const struct unit *u;
	uint64_t ipart, fpart, fscale;
	char names[64];

	if (!text || !*text)
		return set_err(err, errlen, "empty duration");
	if (parse_decimal(&p, &ipart, &fpart, &fscale, err, errlen))
		return -1;
	u = find_unit(duration_units, *p ? p : default_unit);
	if (!u) {
		list_units(duration_units, names, sizeof(names));
		if (!*p)
			return set_err(err, errlen, "bad default unit '%s'",
				       default_unit ? default_unit : "");
		return set_err(err, errlen, "unknown unit '%s' (use %s)", p,
			       names);
	}
	return scale_exact(ipart, fpart, fscale, u->factor, "nanoseconds",
			   out_ns, err, errlen);
}

/* Parse a duration or exit 2 naming the option. */
uint64_t opt_duration(const char *option, const char *text,
		      const char *default_unit)
{
	char err[160];
	uint64_t ns;

	if (opt_duration_try(text, default_unit, &ns, err, sizeof(err)))
		opt_fail(option, text, "%s", err);
	return ns;
}

/* Parse a decimal unsigned integer within [min, max]. */
int opt_u64_try(const char *text, uint64_t min, uint64_t max, uint64_t *out,
		char *err, size_t errlen)
{
	const char *p = text;
	uint64_t v = 0;

	if (!text || !*text)
		return set_err(err, errlen, "empty value");
	if (*p == '-')
		return set_err(err, errlen, "must not be negative");
	if (*p < '0' || *p > '9')
		return set_err(err, errlen, "expected a whole number");
	for (; *p >= '0' && *p <= '9'; p++) {
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
			return set_err(err, errlen, "number too large");
	}
	if (*p)
		return set_err(err, errlen, "expected a whole number");
	if (v < min || v > max)
		return set_err(err, errlen,
			       "must be between %llu and %llu",
			       (unsigned long long)min,
			       (unsigned long long)max);
	*out = v;
	return 0;
}

/* Parse an unsigned integer or exit 2 naming the option. */
uint64_t opt_u64(const char *option, const char *text, uint64_t min,
		 uint64_t max)
{
	char err[160];
	uint64_t v;

	if (opt_u64_try(text, min, max, &v, err, sizeof(err)))
		opt_fail(option, text, "%s", err);
	return v;
}

/* Parse a plain decimal number within [min, max]. */
int opt_double_try(const char *text, double min, double max, double *out,
		   char *err, size_t errlen)
{
	const char *p = text;
	double v;

	if (!text || !*text)
		return set_err(err, errlen, "empty value");
	/* Accept only -?DIGITS[.DIGITS]: no exponents, hex, nan or inf. */
	if (*p == '-')
		p++;
	if (*p < '0' || *p > '9')
		return set_err(err, errlen, "expected a decimal number");
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return set_err(err, errlen, "expected a decimal number");
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p)
		return set_err(err, errlen, "expected a decimal number");
	v = numtext_decimal(text);
	/* Overflow, or underflow of nonzero digits (strtod's ERANGE) */
	if (isinf(v) || (v != 0 && !isnormal(v)) ||
	    (v == 0 && strpbrk(text, "123456789")))
		return set_err(err, errlen, "number out of range");
	if (!(v >= min && v <= max))
		return set_err(err, errlen, "must be between %g and %g", min,
			       max);
	*out = v;
	return 0;
}

/* Parse a decimal number or exit 2 naming the option. */
double opt_double(const char *option, const char *text, double min,
		  double max)
{
	char err[160];
	double v;

	if (opt_double_try(text, min, max, &v, err, sizeof(err)))
		opt_fail(option, text, "%s", err);
	return v;
}

/* Parse a byte size with an optional 1024-based suffix. */
int opt_size_try(const char *text, uint64_t *out_bytes, char *err,
		 size_t errlen)
{
	const char *p = text;
	const struct unit *u;
	uint64_t ipart, fpart, fscale;
	char names[64];

	if (!text || !*text)
		return set_err(err, errlen, "empty size");
	if (parse_decimal(&p, &ipart, &fpart, &fscale, err, errlen))
		return -1;
	u = find_unit(size_units, p);
	if (!u) {
		list_units(size_units, names, sizeof(names));
		return set_err(err, errlen, "unknown size suffix '%s' (use %s)",
			       p, names);
	}
	return scale_exact(ipart, fpart, fscale, u->factor, "bytes", out_bytes,
			   err, errlen);
}

/* Parse a byte size or exit 2 naming the option. */
uint64_t opt_size(const char *option, const char *text)
{
	char err[160];
	uint64_t v;

	if (opt_size_try(text, &v, err, sizeof(err)))
		opt_fail(option, text, "%s", err);
	return v;
}

/* Return the index of text among choices or exit 2 listing them. */
int opt_choice(const char *option, const char *text,
	       const char *const choices[])
{
	char list[256];
	size_t len = 0;
	int i;

	for (i = 0; choices[i]; i++)
		if (text && !strcmp(text, choices[i]))
			return i;
	list[0] = '\0';
	for (i = 0; choices[i] && len < sizeof(list); i++)
		len += (size_t)fmt_snprintf(list + len, sizeof(list) - len, "%s%s",
					    i ? ", " : "", choices[i]);
	opt_fail(option, text, "expected one of %s", list);
}

/* Parse a CPU number at *pp (decimal, < CPU_SETSIZE); advances *pp. */
static int parse_cpu(const char **pp, long *cpu, char *err, size_t errlen)
{
	const char *p = *pp;
	long v = 0;

	if (*p == '-')
		return set_err(err, errlen, "CPU numbers must not be negative");
	if (*p < '0' || *p > '9')
		return set_err(err, errlen,
			       "expected a CPU list like 0-3,6");
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v >= CPU_SETSIZE)
			return set_err(err, errlen,
				       "CPU numbers must be below %d",
				       CPU_SETSIZE);
	}
	*pp = p;
	*cpu = v;
	return 0;
}

/* Parse a CPU list such as 0-3,6 into set. */
int opt_cpulist_try(const char *text, cpu_set_t *set, char *err,
		    size_t errlen)
{
	const char *p = text;
	long first, last, cpu;

	CPU_ZERO(set);
	if (!text || !*text)
		return set_err(err, errlen, "empty CPU list");
	for (;;) {
		if (parse_cpu(&p, &first, err, errlen))
			return -1;
		last = first;
		if (*p == '-') {
			p++;
			if (parse_cpu(&p, &last, err, errlen))
				return -1;
			if (last < first)
				return set_err(err, errlen,
					       "range %ld-%ld goes backwards",
					       first, last);
		}
		for (cpu = first; cpu <= last; cpu++)
			CPU_SET((size_t)cpu, set);
		if (!*p)
			return 0;
		if (*p != ',')
			return set_err(err, errlen,
				       "expected a CPU list like 0-3,6");
		p++;
	}
}

/* Parse a CPU list or exit 2 naming the option. */
void opt_cpulist(const char *option, const char *text, cpu_set_t *set)
{
	char err[160];

	if (opt_cpulist_try(text, set, err, sizeof(err)))
		opt_fail(option, text, "%s", err);
}

/* Exit 2 unless every CPU of set is in this process's affinity mask. */
void opt_cpulist_allowed(const char *option, const char *text,
			 const cpu_set_t *set)
{
	cpu_set_t allowed, missing;
	char allowed_buf[256], missing_buf[256];

	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		opt_fail(option, text, "cannot read allowed CPUs "
			 "(sched_getaffinity: %s)", strerror(errno));
	CPU_XOR(&missing, set, &allowed);
	CPU_AND(&missing, &missing, set);
	if (CPU_COUNT(&missing) == 0)
		return;
	opt_cpulist_format(&missing, missing_buf, sizeof(missing_buf));
	opt_cpulist_format(&allowed, allowed_buf, sizeof(allowed_buf));
	opt_fail(option, text, "CPU %s not available to this process "
		 "(allowed: %s)", missing_buf, allowed_buf);
}

/* Format set as a compact CPU list (0-3,6) into buf. */
void opt_cpulist_format(const cpu_set_t *set, char *buf, size_t buflen)
{
	size_t len = 0;
	int cpu = 0, last;

	if (!buflen)
		return;
	buf[0] = '\0';
	while (cpu < CPU_SETSIZE) {
		if (!CPU_ISSET((size_t)cpu, set)) {
			cpu++;
			continue;
		}
		last = cpu;
		while (last + 1 < CPU_SETSIZE &&
		       CPU_ISSET((size_t)(last + 1), set))
			last++;
		if (len < buflen) {
			if (last == cpu)
				len += (size_t)fmt_snprintf(buf + len, buflen - len,
							    "%s%d", len ? "," : "",
							    cpu);
			else
				len += (size_t)fmt_snprintf(buf + len, buflen - len,
							    "%s%d-%d",
							    len ? "," : "", cpu,
							    last);
		}
		cpu = last + 1;
	}
}

/* Find the entry named exactly name[0..len) in table, or NULL. */
static const struct opt_long *opt_find_exact(const struct opt_long *table,
					   const char *name, size_t len)
{
	for (; table->name; table++)
		if (strlen(table->name) == len && !strncmp(table->name, name, len))
			return table;
	return NULL;
}

/* Refuse abbreviated and repeated long options (see opt.h). */
/* Whether name is one of the NULL-terminated names (list may be NULL). */
static bool opt_in_list(const char *name, const char *const *list)
{
	for (; list && *list; list++)
		if (!strcmp(name, *list))
			return true;
	return false;
}

void opt_check_args(int argc, char **argv, const struct opt_long *table,
		    const char *const *repeatable)
{
	const struct opt_long *o, *full;
	unsigned char seen[128] = { 0 };
	const char *name, *eq;
	size_t len, k;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return;
		if (strncmp(argv[i], "--", 2))
			continue;
		name = argv[i] + 2;
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		o = opt_find_exact(table, name, len);
		if (o) {
			k = (size_t)(o - table);
			if (k < sizeof(seen) && seen[k]++ &&
			    !opt_in_list(o->name, repeatable)) {
				fmt_fprintf(stderr, "rtprobe: option '--%s' given "
					    "twice: give it once\n", o->name);
				exit(RTP_EXIT_USAGE);
			}
			/* Skip a separate value so "--on-spike --x" is fine. */
			if (o->takes_value && !eq)
				i++;
			continue;
		}
		for (full = table; full->name; full++)
			if (len && !strncmp(full->name, name, len))
				break;
		if (full->name) {
			fmt_fprintf(stderr, "rtprobe: unknown option '--%.*s' (options "
				    "are never abbreviated: did you mean '--%s'?)\n",
				    (int)len, name, full->name);
			exit(RTP_EXIT_USAGE);
		}
		/* Wholly unknown: opt_next() reports it the usual way. */
	}
}

void opt_refuse(const char *option, const char *text, const char *what,
		const char *why)
{
	opt_fail(option, text ? text : "", "does not apply to %s: %s", what,
		 why);
}

static const char *const opt_type_names[] = {
	[OPT_FLAG] = "flag",         [OPT_DURATION] = "duration",
	[OPT_INTEGER] = "integer",   [OPT_NUMBER] = "number",
	[OPT_SIZE] = "size",         [OPT_CHOICE] = "choice",
	[OPT_CHOICES] = "choices",   [OPT_CPULIST] = "cpulist",
	[OPT_CPU] = "cpu",           [OPT_LIST] = "list",
	[OPT_TEXT] = "text",
};

const char *opt_type_name(enum opt_type type)
{
	if ((size_t)type < sizeof(opt_type_names) / sizeof(opt_type_names[0]))
		return opt_type_names[type];
	return "text";
}

void opt_desc_table(struct opt_long *out, size_t cap, size_t *n,
		    const struct opt_desc *descs)
{
	const struct opt_desc *d;

	for (d = descs; d && d->name; d++) {
		if (*n + 2 > cap) {
			fmt_fprintf(stderr, "rtprobe: internal error: option table "
				    "of %zu entries too small\n", cap);
			abort();
		}
		out[*n] = (struct opt_long){
			d->name, d->id, d->type != OPT_FLAG,
		};
		(*n)++;
	}
	out[*n] = (struct opt_long){ NULL, 0, false };
}

/* The placeholder of a value in --help. */
static const char *opt_metavar(const struct opt_desc *d)
{
	static const char *const by_type[] = {
		[OPT_FLAG] = "",      [OPT_DURATION] = "D",
		[OPT_INTEGER] = "N",  [OPT_NUMBER] = "X",
		[OPT_SIZE] = "SIZE",  [OPT_CHOICE] = "NAME",
		[OPT_CHOICES] = "LIST", [OPT_CPULIST] = "LIST",
		[OPT_CPU] = "CPU",    [OPT_LIST] = "LIST",
		[OPT_TEXT] = "TEXT",
	};

	if (d->metavar)
		return d->metavar;
	return by_type[d->type];
}

void opt_desc_usage(FILE *f, const struct opt_desc *descs)
{
	const struct opt_desc *d;
	const char *line, *nl;
	char head[48], help[TEXT_MAX];
	int col;

	for (d = descs; d && d->name; d++) {
		if (d->short_name)
			col = fmt_snprintf(head, sizeof(head), "  -%c, --%s %s",
					   d->short_name, d->name, opt_metavar(d));
		else
			col = fmt_snprintf(head, sizeof(head), "  --%s %s", d->name,
					   opt_metavar(d));
		fputs(head, f);
		if (col >= 22) {
			fputc('\n', f);
			col = 0;
		}
		for (line = text_get(d->help, help, sizeof(help)); line;
		     line = nl ? nl + 1 : NULL) {
			nl = strchr(line, '\n');
			fmt_fprintf(f, "%*s%.*s\n", 22 - col, "",
				    (int)(nl ? nl - line : (long)strlen(line)),
				    line);
			col = 0;
		}
	}
}

const struct opt_desc *opt_desc_find(const struct opt_desc *descs, int id)
{
	const struct opt_desc *d;

	for (d = descs; d && d->name; d++)
		if (d->id == id)
			return d;
	return NULL;
}

/* The help text on one line (newlines and their indentation as one space). */
static void opt_help_json(struct json *j, const char *help)
{
	char buf[1024], text[TEXT_MAX];
	size_t n = 0;
	const char *p;

	help = text_get(help, text, sizeof(text));
	for (p = help ? help : ""; *p && n + 1 < sizeof(buf); p++) {
		if (*p == '\n') {
			buf[n++] = ' ';
			while (p[1] == ' ')
				p++;
		} else {
			buf[n++] = *p;
		}
	}
	buf[n] = '\0';
	json_str(j, "help", buf);
}

void opt_desc_json(struct json *j, const struct opt_desc *descs)
{
	const struct opt_desc *d;
	const char *const *c;
	char flag[3] = "-";

	for (d = descs; d && d->name; d++) {
		json_begin_object(j, NULL);
		json_str(j, "name", d->name);
		if (d->short_name) {
			flag[1] = d->short_name;
			json_str(j, "short", flag);
		}
		json_str(j, "type", opt_type_name(d->type));
		if (d->type == OPT_FLAG)
			json_bool(j, "default", false);
		else
			json_str(j, "default", d->def);
		if (d->unit)
			json_str(j, "unit", d->unit);
		if (d->choices) {
			json_begin_array(j, "choices");
			for (c = d->choices; *c; c++)
				json_str(j, NULL, *c);
			json_end_array(j);
		}
		opt_help_json(j, d->help);
		json_end_object(j);
	}
}
