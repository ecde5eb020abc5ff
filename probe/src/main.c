// SPDX-License-Identifier: MIT
/*
 * main.c - rtprobe: dispatch to a subcommand.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "rtprobe.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "cyclic", cmd_cyclic, "timer wake-up latency (cyclictest-style)" },
	{ "sysinfo", cmd_sysinfo, "print the target's real-time facts as JSON" },
	{ "load", cmd_load, "standard loads defined by rates" },
	{ "hackbench", cmd_hackbench, "scheduler benchmark (hackbench-style)" },
	{ "periodic", cmd_periodic, "periodic drift (LTP sched_latency)" },
	{ "clock", cmd_clock, "clock-read gaps and read cost (LTP gtod_latency)" },
	{ "wakeup", cmd_wakeup, "waker -> wakee latency of a wake-up mechanism" },
	{ "noise", cmd_noise, "busy-loop interruptions per CPU (oslat-style)" },
	{ "ctx", cmd_ctx, "context-switch time through a pipe ring (lat_ctx)" },
	{ "ipc", cmd_ipc, "pipe/fifo/unix round trip and pipe bandwidth" },
	{ "event", cmd_event, "external event response (self, UIO, GPIO)" },
	{ "pi", cmd_pi, "priority inheritance vs inversion (pi_perf)" },
	{ NULL, NULL, NULL },
};

/* Print the list of subcommands. */
static void usage(FILE *f)
{
	const struct command *c;

	fprintf(f, "usage: rtprobe <command> [options]   (rtprobe <command> --help)\n\n");
	fprintf(f, "Real-time latency probe %s; output: NDJSON (schema %s).\n\n",
		RTPROBE_VERSION, RTPROBE_SCHEMA);
	for (c = commands; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fprintf(f, "\nExit codes: 0 ok, 1 threshold/criterion failed, 2 bad usage, "
		   "3 environment cannot run it, 4 interrupted.\n");
}

int main(int argc, char **argv)
{
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
		printf("rtprobe %s\n", RTPROBE_VERSION);
		return RTP_EXIT_OK;
	}
	for (c = commands; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->fn(argc - 1, argv + 1);
	fprintf(stderr, "rtprobe: unknown command '%s' (see rtprobe --help)\n",
		argv[1]);
	return RTP_EXIT_USAGE;
}
