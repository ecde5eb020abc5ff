// SPDX-License-Identifier: MIT
/*
 * main.c - rtprobe: dispatch to a test (catalogue.c) or a command.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "fmt.h"
#include "rtprobe.h"
#include "testdesc.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

/* The commands that are not latency tests. */
static const struct command commands[] = {
	{ "sysinfo", cmd_sysinfo, "print the target's real-time facts as JSON" },
	{ "load", cmd_load, "standard loads defined by rates" },
	{ "describe", cmd_describe,
	  "tests, loads and their options (--json: for programs)" },
	{ NULL, NULL, NULL },
};

/* Print the list of tests and commands. */
static void usage(FILE *f)
{
	const struct test_desc *const *t;
	const struct command *c;

	fmt_fprintf(f, "usage: rtprobe <command> [options]   (rtprobe <command> --help)\n\n");
	fmt_fprintf(f, "Real-time latency probe %s; output: NDJSON (schema %s).\n\n",
		    RTPROBE_VERSION, RTPROBE_SCHEMA);
	for (t = rtp_tests; *t; t++)
		fmt_fprintf(f, "  %-10s %s\n", (*t)->name, (*t)->summary);
	for (c = commands; c->name; c++)
		fmt_fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fmt_fprintf(f, "\nExit codes: 0 ok, 1 threshold/criterion failed, 2 bad usage, "
		   "3 environment cannot run it, 4 interrupted.\n");
}

int main(int argc, char **argv)
{
	const struct test_desc *const *t;
	const struct command *c;

	if (argc < 2) {
		usage(stderr);
		return RTP_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return RTP_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		fmt_printf("rtprobe %s\n", RTPROBE_VERSION);
		return RTP_EXIT_OK;
	}
	for (t = rtp_tests; *t; t++) {
		if (strcmp(argv[1], (*t)->name))
			continue;
		if ((*t)->main)
			return (*t)->main(argc - 1, argv + 1);
		return test_main(*t, argc - 1, argv + 1);
	}
	for (c = commands; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->fn(argc - 1, argv + 1);
	fmt_fprintf(stderr, "rtprobe: unknown command '%s' (see rtprobe --help)\n",
		    argv[1]);
	return RTP_EXIT_USAGE;
}
