// SPDX-License-Identifier: MIT
/*
 * describe.c - `rtprobe describe [--json]`: the tests, loads and options
 * this binary offers, from the same descriptors that parse its command
 * lines, so a host tool never keeps its own list or reads --help text.
 *
 * --json writes one JSON document (schema "rtprobe-describe/1",
 * probe/schema/rtprobe-describe-1.schema.json, docs/rtprobe.md); without it
 * a short human listing.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "fmt.h"
#include "json.h"
#include "load.h"
#include "opt.h"
#include "rtprobe.h"
#include "testdesc.h"

#define DESCRIBE_SCHEMA "rtprobe-describe/1"

/* The common options a test takes, as descriptors (into out, cap entries). */
static void describe_taken(const struct test_desc *t, struct opt_desc *out,
			   size_t cap)
{
	const struct opt_desc *d;
	size_t n = 0;

	for (d = common_descriptors(); d->name && n + 1 < cap; d++)
		if (test_takes_common(t, d->id))
			out[n++] = *d;
	out[n] = (struct opt_desc){ .name = NULL };
}

/* A NULL-terminated string list (NULL: empty) as a JSON array. */
static void describe_list(struct json *j, const char *key,
			  const char *const *list)
{
	json_begin_array(j, key);
	for (; list && *list; list++)
		json_str(j, NULL, *list);
	json_end_array(j);
}

/* What the host does with a test's results (struct test_host). */
static void describe_host(struct json *j, const struct test_desc *t)
{
	json_begin_object(j, "host");
	json_bool(j, "rt_only", t->traits & TEST_RT_ONLY);
	json_bool(j, "own_cpus", t->traits & TEST_OWN_CPUS);
	json_str(j, "busy_loop", t->host.busy_loop);
	json_str(j, "runs_per", t->host.runs_per);
	describe_list(j, "figures", t->host.figures);
	describe_list(j, "table_keys", t->host.table_keys);
	describe_list(j, "layouts", t->host.layouts);
	json_end_object(j);
}

/* One test's entry. */
static void describe_test(struct json *j, const struct test_desc *t)
{
	struct opt_desc taken[C_END - COMMON_OPT_BASE + 1];
	const struct opt_desc *d;

	json_begin_object(j, NULL);
	json_str(j, "name", t->name);
	json_str(j, "summary", t->summary);
	json_bool(j, "timed", t->traits & TEST_TIMED);
	json_bool(j, "series", t->traits & TEST_SERIES);
	json_bool(j, "warmup", t->traits & TEST_WARMUP);
	json_bool(j, "simulate", t->traits & TEST_SIMULATE);
	json_bool(j, "deadline", !(t->traits & TEST_NO_DEADLINE));
	json_str(j, "untimed_with", t->untimed_flag);
	json_str(j, "cpu_option", t->cpu_option);
	if (t->traits & TEST_TIMED)
		json_u64(j, "default_duration_ns", t->default_duration_ns);
	else
		json_null(j, "default_duration_ns");
	json_u64(j, "nominal_ns", t->default_duration_ns);
	json_begin_array(j, "options");
	opt_desc_json(j, t->options);
	json_end_array(j);
	json_begin_array(j, "common_options");
	if (!t->main) {
		describe_taken(t, taken, sizeof(taken) / sizeof(taken[0]));
		opt_desc_json(j, taken);
	}
	json_end_array(j);
	json_begin_array(j, "refused");
	for (d = common_descriptors(); d->name; d++)
		if (!t->main && !test_takes_common(t, d->id))
			json_str(j, NULL, d->name);
	json_end_array(j);
	describe_host(j, t);
	json_end_object(j);
}

/* One load kind's entry. */
static void describe_load(struct json *j, const struct load_kind *k)
{
	const char *const *c;

	json_begin_object(j, NULL);
	json_str(j, "name", k->name);
	json_str(j, "summary", k->summary);
	json_str(j, "unit", k->unit);
	json_double(j, "rate_min", k->rate_lo);
	json_double(j, "rate_max", k->rate_hi);
	json_begin_array(j, "counters");
	for (c = k->counter_names; *c; c++)
		json_str(j, NULL, *c);
	json_end_array(j);
	json_begin_array(j, "options");
	opt_desc_json(j, k->options);
	json_end_array(j);
	json_begin_array(j, "common_options");
	opt_desc_json(j, load_common_options);
	json_end_array(j);
	json_end_object(j);
}

/* Write the whole description as one JSON document on stdout. */
static int describe_json(void)
{
	const struct test_desc *const *t;
	const struct load_kind *const *k;
	struct json j;
	int rc;

	json_init(&j);
	json_begin_object(&j, NULL);
	json_str(&j, "schema", DESCRIBE_SCHEMA);
	json_str(&j, "tool", "rtprobe");
	json_str(&j, "version", RTPROBE_VERSION);
	json_str(&j, "records", RTPROBE_SCHEMA);
	json_begin_array(&j, "tests");
	for (t = rtp_tests; *t; t++)
		describe_test(&j, *t);
	json_end_array(&j);
	json_begin_array(&j, "loads");
	for (k = load_kinds; *k; k++)
		describe_load(&j, *k);
	json_end_array(&j);
	json_end_object(&j);
	rc = json_emit(&j, stdout);
	json_free(&j);
	if (rc || fflush(stdout) || ferror(stdout)) {
		fmt_fprintf(stderr, "rtprobe: describe: cannot write stdout\n");
		return RTP_EXIT_ENV;
	}
	return RTP_EXIT_OK;
}

/* A short listing for people. */
static void describe_text(void)
{
	const struct test_desc *const *t;
	const struct load_kind *const *k;
	const struct opt_desc *d;

	fmt_printf("tests (rtprobe TEST --help for details):\n");
	for (t = rtp_tests; *t; t++) {
		fmt_printf("  %-10s %s%s\n            options:", (*t)->name,
			   (*t)->summary, (*t)->traits & TEST_TIMED ? "" :
			   " [untimed]");
		for (d = (*t)->options; d->name; d++)
			fmt_printf(" --%s", d->name);
		fmt_printf("\n");
	}
	fmt_printf("loads (rtprobe load KIND --help):\n");
	for (k = load_kinds; *k; k++) {
		fmt_printf("  %-10s %s (--rate in %s)\n            options:",
			   (*k)->name, (*k)->summary, (*k)->unit);
		for (d = (*k)->options; d->name; d++)
			fmt_printf(" --%s", d->name);
		fmt_printf("\n");
	}
}

int cmd_describe(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--json"))
		return describe_json();
	if (argc == 2 && (!strcmp(argv[1], "--help") ||
			  !strcmp(argv[1], "-h"))) {
		fmt_printf("usage: rtprobe describe [--json]\n\nThe tests, loads "
			   "and options of this rtprobe; --json: one JSON\n"
			   "document (schema %s) for programs.\n",
			   DESCRIBE_SCHEMA);
		return RTP_EXIT_OK;
	}
	if (argc > 1) {
		/* name the word at fault: "--json --bogus" is about --bogus */
		const char *bad = argv[1];

		if (!strcmp(bad, "--json") && argc > 2)
			bad = argv[2];
		fmt_fprintf(stderr, "rtprobe: describe: unknown option '%s' (use "
			    "--json)\n", bad);
		return RTP_EXIT_USAGE;
	}
	describe_text();
	return RTP_EXIT_OK;
}
