// SPDX-License-Identifier: MIT
/*
 * testdesc.c - the one option-parsing path of every latency test
 * (see testdesc.h).
 */
#include "testdesc.h"

#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "optparse.h"
#include "rtprobe.h"
#include "text.h"

#define TEST_HELP_ID (COMMON_OPT_BASE - 1)
#define TEST_MAX_OPTIONS 80

/* Options whose values add up when repeated; any other is given once. */
static const char *const test_repeatable[] = { "threshold", NULL };

static const struct opt_desc test_help_desc[] = {
	{ .name = "help", .id = TEST_HELP_ID, .type = OPT_FLAG,
	  .help = HELP_TESTDESC_HELP },
	{ .name = NULL },
};

int test_takes_common(const struct test_desc *t, int id)
{
	if (!(t->traits & TEST_TRACE) && (COMMON_TRACE_BITS & COMMON_BIT(id)))
		return 0;
	return !(t->refused & COMMON_BIT(id));
}

void test_refuse(const struct test_desc *t, const char *option,
		 const char *value, const char *why)
{
	opt_refuse(option, value, t->name, why);
}

void test_usage(const struct test_desc *t, FILE *f)
{
	const struct opt_desc *d;
	char text[TEXT_MAX];
	int col;

	fmt_fprintf(f, "usage: rtprobe %s [options]\n\n%s\n", t->name,
		    text_get(t->intro, text, sizeof(text)));
	fmt_fprintf(f, "Options of %s:\n", t->name);
	opt_desc_usage(f, t->options);
	fputs("\nCommon options:\n", f);
	for (d = common_descriptors(); d->name; d++) {
		struct opt_desc one[2] = { *d, { .name = NULL } };

		if (test_takes_common(t, d->id))
			opt_desc_usage(f, one);
	}
	opt_desc_usage(f, test_help_desc);
	if (t->refused || !(t->traits & TEST_TRACE)) {
		col = fmt_fprintf(f, "\nNot taken by %s:", t->name);
		for (d = common_descriptors(); d->name; d++) {
			if (test_takes_common(t, d->id))
				continue;
			if (col + (int)strlen(d->name) + 3 > 78)
				col = fmt_fprintf(f, "\n ") - 1;
			col += fmt_fprintf(f, " --%s", d->name);
		}
		fmt_fprintf(f, "\n(%s)\n", t->refused_why ? t->refused_why :
			    "--trace is offered by cyclic, wakeup and noise");
	}
	if (t->examples)
		fmt_fprintf(f, "\nExamples:\n%s",
			    text_get(t->examples, text, sizeof(text)));
	fputs("\nExit codes: 0 ok, 1 a threshold or criterion failed, 2 bad "
	      "usage,\n3 environment cannot run it (the message names the "
	      "remedy), 4 interrupted\n(SIGINT/SIGTERM/SIGHUP; the result is "
	      "still written).\n", f);
}

int test_main(const struct test_desc *t, int argc, char **argv)
{
	struct opt_long table[TEST_MAX_OPTIONS];
	struct opt_parser p;
	struct rtp_common c;
	size_t n = 0;
	char name[40];
	void *ctx;
	int id, rc;

	ctx = calloc(1, t->ctx_size ? t->ctx_size : 1);
	if (!ctx) {
		fmt_fprintf(stderr, "rtprobe: %s: out of memory\n", t->name);
		return RTP_EXIT_ENV;
	}
	common_defaults(&c, t->name, t->default_duration_ns);
	if (t->defaults)
		t->defaults(ctx, &c);
	opt_desc_table(table, TEST_MAX_OPTIONS, &n, t->options);
	opt_desc_table(table, TEST_MAX_OPTIONS, &n, test_help_desc);
	opt_desc_table(table, TEST_MAX_OPTIONS, &n, common_descriptors());
	opt_check_args(argc, argv, table, test_repeatable);
	opt_parser_init(&p, argc, argv, table, "h");
	for (;;) {
		id = opt_next(&p);
		if (id == OPT_END)
			break;
		/* an option the test does not take: say that, not how it was given */
		if (id < 0 && p.found && p.found->id >= COMMON_OPT_BASE &&
		    !test_takes_common(t, p.found->id))
			id = p.found->id;
		if (id < 0)
			common_bad_option(t->name, &p, id);
		if (id == 'h' || id == TEST_HELP_ID) {
			test_usage(t, stdout);
			free(ctx);
			return RTP_EXIT_OK;
		}
		if (id >= COMMON_OPT_BASE) {
			if (!test_takes_common(t, id)) {
				fmt_snprintf(name, sizeof(name), "--%s",
					     p.found ? p.found->name : "?");
				test_refuse(t, name, p.value,
					    (COMMON_TRACE_BITS & COMMON_BIT(id)) ?
					    "--trace is offered by cyclic, "
					    "wakeup and noise" : t->refused_why);
			}
			common_handle(&c, id, p.value);
			continue;
		}
		t->option(ctx, &c, id, p.value);
	}
	if (t->check)
		t->check(ctx, &c);
	if ((t->traits & TEST_NO_DEADLINE) && c.policy == POLICY_DEADLINE)
		test_refuse(t, "--policy", "deadline", "it does not set the "
			    "runtime and period SCHED_DEADLINE needs; use "
			    "fifo, rr or other");
	common_finish(&c, p.rest < argc ? argv[p.rest] : NULL);
	rc = t->run(ctx, &c, argc, argv);
	free(ctx);
	return rc;
}
