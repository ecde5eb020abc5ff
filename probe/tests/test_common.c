// SPDX-License-Identifier: MIT
/*
 * test_common.c - the common test options: parsing, defaults, resolution
 * and every contradiction refused with exit 2 and one line naming the option.
 * Each case parses in a forked child (a refused option exits).
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#include "opt.h"
#include "tap.h"
#include "testdesc.h"

#define MAX_ARGS 16

/* Print the parsed options as one summary line and end the child. */
static int fake_run(void *ctx, struct rtp_common *c, int argc, char **argv)
{
	char cpus[64];
	int i;

	(void)ctx;
	(void)argc;
	(void)argv;
	opt_cpulist_format(&c->cpus, cpus, sizeof(cpus));
	printf("n=%d prio=%d policy=%s dur=%llu loops=%llu thr=", c->nthreads,
	       c->priority, common_policy_name(c->policy),
	       (unsigned long long)c->duration_ns,
	       (unsigned long long)c->loops);
	for (i = 0; i < c->nthresholds; i++)
		printf("%s%llu", i ? "," : "",
		       (unsigned long long)c->thresholds_ns[i]);
	printf(" cpu0=%d sim=%d\n", c->cpu_list[0], c->simulate);
	exit(0);
}

/* The fake test's one own option. */
static void fake_option(void *ctx, struct rtp_common *c, int id,
			const char *arg)
{
	(void)ctx;
	(void)c;
	(void)id;
	opt_duration("--interval", arg, "us");
}

static const struct opt_desc fake_opts[] = {
	{ .name = "interval", .id = 1, .type = OPT_DURATION, .unit = "us",
	  .help = "a period" },
	{ .name = NULL },
};

/* A test through the shared parsing path (testdesc.c). */
static const struct test_desc fake_test = {
	.name = "fake",
	.intro = "a test of the option parser\n",
	.traits = TEST_TIMED | TEST_SERIES | TEST_WARMUP,
	.default_duration_ns = 5 * 1000000000ULL,
	.options = fake_opts,
	.option = fake_option,
	.run = fake_run,
};

/* Like fake_test, but --worst and --raw do not apply. */
static const struct test_desc fake_refusing = {
	.name = "fake",
	.intro = "a test of the option parser\n",
	.traits = TEST_TIMED,
	.default_duration_ns = 5 * 1000000000ULL,
	.options = fake_opts,
	.refused = COMMON_BIT(C_WORST) | COMMON_BIT(C_RAW),
	.refused_why = "no series",
	.option = fake_option,
	.run = fake_run,
};

/* Parse args as `rtprobe fake ARGS` in this (child) process; print a summary. */
static void parse_and_print(const char *const args[])
{
	const struct test_desc *t = &fake_test;
	char *argv[MAX_ARGS + 2];
	int argc = 1;

	argv[0] = (char *)"fake";
	if (args[0] && !strcmp(args[0], "REFUSING")) {
		t = &fake_refusing;
		args++;
	}
	while (args[argc - 1] && argc <= MAX_ARGS) {
		argv[argc] = (char *)args[argc - 1];
		argc++;
	}
	argv[argc] = NULL;
	exit(test_main(t, argc, argv));
}

/* Run a parse in a child; collect its exit status and stdout+stderr. */
static int run_case(const char *const args[], char *out, size_t outlen)
{
	int fds[2], status = 0;
	ssize_t n;
	size_t len = 0;
	pid_t pid;

	if (pipe(fds))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		parse_and_print(args);
	}
	close(fds[1]);
	while (len + 1 < outlen &&
	       (n = read(fds[0], out + len, outlen - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(fds[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A case that must be refused: exit 2, one line, containing want. */
static void refused(struct tap *t, const char *const args[], const char *want)
{
	char out[512];
	int rc = run_case(args, out, sizeof(out));
	char *nl = strchr(out, '\n');

	tap_ok(t, rc == 2 && strstr(out, want) && nl && !nl[1] &&
	       !strncmp(out, "rtprobe: ", 9),
	       "%s %s ... refused naming '%s'", args[0],
	       args[1] ? args[1] : "", want);
	if (rc != 2 || !strstr(out, want))
		tap_diag("rc=%d output: %s", rc, out);
}

/* A case that must be accepted; its summary must contain want. */
static void accepted(struct tap *t, const char *const args[], const char *want)
{
	char out[512];
	int rc = run_case(args, out, sizeof(out));

	tap_ok(t, rc == 0 && strstr(out, want), "%s %s ... gives '%s'",
	       args[0] ? args[0] : "(no options)",
	       args[0] && args[1] ? args[1] : "", want);
	if (rc != 0 || !strstr(out, want))
		tap_diag("rc=%d output: %s", rc, out);
}

int main(void)
{
	struct tap t = { 0, 0 };
	cpu_set_t allowed;
	char want[64];
	int ncpus;

	if (sched_getaffinity(0, sizeof(allowed), &allowed)) {
		tap_ok(&t, false, "sched_getaffinity");
		return tap_done(&t);
	}
	ncpus = CPU_COUNT(&allowed);
	snprintf(want, sizeof(want), "n=%d prio=80 policy=fifo dur=5000000000",
		 ncpus);
	accepted(&t, (const char *const[]){ NULL }, want);
	accepted(&t, (const char *const[]){ "--loops", "10", NULL },
		 "dur=0 loops=10");
	accepted(&t, (const char *const[]){ "--duration", "1.5m", NULL },
		 "dur=90000000000");
	accepted(&t, (const char *const[]){ "--policy", "other", NULL },
		 "prio=0 policy=other");
	accepted(&t, (const char *const[]){ "--policy", "rr", "--priority",
					     "99", NULL }, "prio=99 policy=rr");
	accepted(&t, (const char *const[]){ "--threshold", "100,20us",
					     "--threshold", "1ms", NULL },
		 "thr=20000,100000,1000000");
	accepted(&t, (const char *const[]){ "--threads", "1", NULL },
		 "n=1 ");
	accepted(&t, (const char *const[]){ "--simulate",
					     "7:uniform,min=1us,max=9us", NULL },
		 "sim=1");
	accepted(&t, (const char *const[]){ "--threshold", "50us",
					     "--on-spike", "true", NULL },
		 "thr=50000");
	accepted(&t, (const char *const[]){ "--raw", "/tmp/x",
					     "--raw-buffer", "2048", NULL },
		 "n=");
	accepted(&t, (const char *const[]){ "--break-on", "100",
					     "--break-action", "continue",
					     NULL }, "n=");
	accepted(&t, (const char *const[]){ "--window", "250ms", NULL },
		 "n=");
	accepted(&t, (const char *const[]){ "--window", "100ms", NULL },
		 "n=");
	refused(&t, (const char *const[]){ "--window", "50ms", NULL },
		"must be whole milliseconds from 100ms to 1h");
	refused(&t, (const char *const[]){ "--window", "1500us", NULL },
		"--window '1500us'");
	refused(&t, (const char *const[]){ "--window", "2h", NULL },
		"--window '2h'");

	refused(&t, (const char *const[]){ "--bogus", NULL },
		"unknown option '--bogus' (see rtprobe fake --help)");
	refused(&t, (const char *const[]){ "--bogus=1", NULL },
		"unknown option '--bogus'");
	refused(&t, (const char *const[]){ "--cpus", NULL },
		"option '--cpus' needs a value");
	refused(&t, (const char *const[]){ "--verbose=yes", NULL },
		"option '--verbose' takes no value");
	refused(&t, (const char *const[]){ "stray", NULL },
		"unexpected argument 'stray'");
	refused(&t, (const char *const[]){ "--cpus", "0-1023", NULL },
		"--cpus");
	refused(&t, (const char *const[]){ "--cpus", "x", NULL }, "--cpus 'x'");
	refused(&t, (const char *const[]){ "--threads", "1025", NULL },
		"--threads");
	refused(&t, (const char *const[]){ "--duration", "5s", "--loops", "9",
					    NULL }, "--loops");
	refused(&t, (const char *const[]){ "--duration", "0", NULL },
		"--duration '0'");
	refused(&t, (const char *const[]){ "--duration", "5parsecs", NULL },
		"--duration '5parsecs'");
	refused(&t, (const char *const[]){ "--interval", "-5", NULL },
		"--interval '-5'");
	refused(&t, (const char *const[]){ "--priority", "200", NULL },
		"--priority '200'");
	refused(&t, (const char *const[]){ "--priority", "0", NULL },
		"--priority '0'");
	refused(&t, (const char *const[]){ "--priority", "50", "--policy",
					    "other", NULL }, "--priority");
	refused(&t, (const char *const[]){ "--policy", "batch", NULL },
		"--policy 'batch'");
	refused(&t, (const char *const[]){ "--on-spike", "true", NULL },
		"--on-spike needs at least one --threshold");
	refused(&t, (const char *const[]){ "--threshold", "0", NULL },
		"--threshold '0'");
	refused(&t, (const char *const[]){ "--threshold", "5us,5000ns", NULL },
		"--threshold");
	refused(&t, (const char *const[]){ "--threshold", "1,2,3,4,5,6,7,8,9",
					    NULL }, "--threshold");
	refused(&t, (const char *const[]){ "--raw", "f", "--raw-buffer",
					    "3000", NULL },
		"--raw-buffer '3000'");
	refused(&t, (const char *const[]){ "--raw", "f", "--raw-buffer",
					    "512", NULL }, "--raw-buffer '512'");
	refused(&t, (const char *const[]){ "--raw-buffer", "4096", NULL },
		"--raw-buffer needs --raw");
	refused(&t, (const char *const[]){ "--break-action", "stop", NULL },
		"--break-action needs --break-on");
	refused(&t, (const char *const[]){ "--break-on", "100",
					    "--break-action", "pause", NULL },
		"--break-action 'pause'");
	refused(&t, (const char *const[]){ "--worst", "65", NULL },
		"--worst '65'");
	refused(&t, (const char *const[]){ "--clock", "cpu", NULL },
		"--clock 'cpu'");
	refused(&t, (const char *const[]){ "--no-pmqos", "--pmqos-us", "5",
					    NULL }, "--pmqos-us");
	refused(&t, (const char *const[]){ "--simulate", "7:gauss", NULL },
		"--simulate '7:gauss'");
	refused(&t, (const char *const[]){ "--output", "", NULL }, "--output");
	refused(&t, (const char *const[]){ "--loops", "5", "--loops", "6",
					    NULL },
		"option '--loops' given twice: give it once");
	refused(&t, (const char *const[]){ "--policy", "rr", "--policy=fifo",
					    NULL }, "option '--policy' given twice");
	refused(&t, (const char *const[]){ "-i", "200", NULL },
		"unknown option '-i' (rtprobe fake takes long options only");
	refused(&t, (const char *const[]){ "--interval", NULL },
		"option '--interval' needs a value");
	refused(&t, (const char *const[]){ "REFUSING", "--worst", "3", NULL },
		"--worst '3': does not apply to fake: no series");
	refused(&t, (const char *const[]){ "REFUSING", "--raw=f", NULL },
		"--raw 'f': does not apply to fake: no series");
	accepted(&t, (const char *const[]){ "REFUSING", "--loops", "3", NULL },
		 "loops=3");
	if (ncpus >= 1) {
		snprintf(want, sizeof(want), "%d", ncpus + 1);
		refused(&t, (const char *const[]){ "--threads", want, NULL },
			"--threads");
	}
	return tap_done(&t);
}
