// SPDX-License-Identifier: MIT
/*
 * test_opt.c - option value parsing: durations, numbers, sizes, CPU lists,
 * and the one-line exit-2 errors of the exiting variants.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opt.h"
#include "tap.h"

struct dur_case {
	const char *text;
	const char *unit;
	uint64_t ns;
};

/* Valid durations give exact nanoseconds. */
static void test_durations_ok(struct tap *t)
{
	static const struct dur_case cases[] = {
		{ "0", "us", 0 },
		{ "1000us", "us", 1000000 },
		{ "1000", "us", 1000000 },
		{ "1.5ms", "us", 1500000 },
		{ "5s", "s", 5000000000ULL },
		{ "5", "s", 5000000000ULL },
		{ "2m", "s", 120000000000ULL },
		{ "2h", "s", 7200000000000ULL },
		{ "1d", "s", 86400000000000ULL },
		{ "250ns", "us", 250 },
		{ "0.001us", "us", 1 },
		{ "1.250000000s", "s", 1250000000 },
		{ "18446744073709551615ns", "us", UINT64_MAX },
		{ "18446744073709551.615us", "us", UINT64_MAX },
		{ "007ms", "us", 7000000 },
		{ "0.125us", "us", 125 },
		{ "2.75h", "s", 9900000000000ULL },
	};
	char err[128], name[96];
	uint64_t ns;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ns = 12345;
		rc = opt_duration_try(cases[i].text, cases[i].unit, &ns, err,
				      sizeof(err));
		snprintf(name, sizeof(name), "duration '%s' (default %s)",
			 cases[i].text, cases[i].unit);
		if (rc)
			tap_diag("error: %s", err);
		tap_is_u64(t, rc ? 1 : ns, cases[i].ns, name);
	}
}

/* Invalid durations are refused with a reason. */
static void test_durations_bad(struct tap *t)
{
	static const char *const bad[] = {
		"", "-5", "-5us", "5parsecs", "us", "1.", ".5ms", "1.5.3ms",
		"1e3us", "0x10us", " 5s", "5s ", "5 s", "+5s", "1.0000000001s",
		"0.5ns", "18446744073709551616ns", "18446744073709552s",
		"213504d", "nan", "inf", "5S", "5sec", "0.999999999999999999s",
	};
	char err[128];
	uint64_t ns;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		rc = opt_duration_try(bad[i], "us", &ns, err, sizeof(err));
		tap_ok(t, rc == -1 && err[0], "duration '%s' refused: %s",
		       bad[i], err);
	}
	tap_ok(t, opt_duration_try("5", "parsecs", &ns, err, sizeof(err)) == -1,
	       "bad default unit refused: %s", err);
}

/* Unsigned integers and decimals. */
static void test_numbers(struct tap *t)
{
	char err[128];
	uint64_t v = 0;
	double d = 0;

	tap_ok(t, !opt_u64_try("80", 1, 99, &v, err, sizeof(err)) && v == 80,
	       "u64 80 in 1..99");
	tap_ok(t, opt_u64_try("200", 1, 99, &v, err, sizeof(err)) == -1,
	       "u64 200 out of 1..99: %s", err);
	tap_ok(t, opt_u64_try("0", 1, 99, &v, err, sizeof(err)) == -1,
	       "u64 0 below min: %s", err);
	tap_ok(t, opt_u64_try("-1", 0, 99, &v, err, sizeof(err)) == -1,
	       "u64 negative: %s", err);
	tap_ok(t, opt_u64_try("12a", 0, 99, &v, err, sizeof(err)) == -1,
	       "u64 junk: %s", err);
	tap_ok(t, opt_u64_try("", 0, 99, &v, err, sizeof(err)) == -1,
	       "u64 empty: %s", err);
	tap_ok(t, opt_u64_try("18446744073709551616", 0, UINT64_MAX, &v, err,
			      sizeof(err)) == -1, "u64 overflow: %s", err);
	tap_ok(t, !opt_u64_try("18446744073709551615", 0, UINT64_MAX, &v, err,
			       sizeof(err)) && v == UINT64_MAX, "u64 max");
	tap_ok(t, !opt_double_try("12.5", 0, 100, &d, err, sizeof(err)) &&
	       d == 12.5, "double 12.5");
	tap_ok(t, !opt_double_try("-3", -10, 10, &d, err, sizeof(err)) &&
	       d == -3.0, "double -3 allowed when min < 0");
	tap_ok(t, opt_double_try("nan", 0, 100, &d, err, sizeof(err)) == -1,
	       "double nan refused: %s", err);
	tap_ok(t, opt_double_try("inf", 0, 1e300, &d, err, sizeof(err)) == -1,
	       "double inf refused: %s", err);
	tap_ok(t, opt_double_try("1e3", 0, 1e6, &d, err, sizeof(err)) == -1,
	       "double exponent refused: %s", err);
	tap_ok(t, opt_double_try("101", 0, 100, &d, err, sizeof(err)) == -1,
	       "double out of range: %s", err);
}

/* Byte sizes with 1024-based suffixes. */
static void test_sizes(struct tap *t)
{
	static const struct { const char *text; uint64_t bytes; } ok[] = {
		{ "0", 0 }, { "4096", 4096 }, { "4K", 4096 }, { "4KiB", 4096 },
		{ "64k", 65536 }, { "1M", 1048576 }, { "1MiB", 1048576 },
		{ "2G", 2147483648ULL }, { "1.5K", 1536 }, { "10B", 10 },
	};
	static const char *const bad[] = { "", "-1K", "4X", "1.3K", "K",
					   "16777216T", "4 K", "4kb" };
	char err[128];
	uint64_t v;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		rc = opt_size_try(ok[i].text, &v, err, sizeof(err));
		tap_ok(t, !rc && v == ok[i].bytes, "size '%s' = %" PRIu64,
		       ok[i].text, ok[i].bytes);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		rc = opt_size_try(bad[i], &v, err, sizeof(err));
		tap_ok(t, rc == -1 && err[0], "size '%s' refused: %s", bad[i],
		       err);
	}
}

/* CPU lists parse, refuse junk and format back compactly. */
static void test_cpulists(struct tap *t)
{
	static const char *const bad[] = { "", "a", "1-", "-1", "3-1", "0,,1",
					   "0,", "1024", "0-1024", "0 1",
					   "0-3:2" };
	char err[128], buf[128], text[64];
	cpu_set_t set;
	size_t i;
	int rc;

	rc = opt_cpulist_try("0-3,6", &set, err, sizeof(err));
	tap_ok(t, !rc && CPU_COUNT(&set) == 5 && CPU_ISSET(6, &set) &&
	       !CPU_ISSET(4, &set), "cpulist 0-3,6");
	opt_cpulist_format(&set, buf, sizeof(buf));
	tap_is_str(t, buf, "0-3,6", "format 0-3,6");
	/* The top CPU is the C library's limit: 1023 with glibc, 127 with musl. */
	snprintf(text, sizeof(text), "7,1,2,3,9-10,%d", CPU_SETSIZE - 1);
	rc = opt_cpulist_try(text, &set, err, sizeof(err));
	opt_cpulist_format(&set, buf, sizeof(buf));
	tap_ok(t, !rc, "cpulist with repeats and order");
	snprintf(text, sizeof(text), "1-3,7,9-10,%d", CPU_SETSIZE - 1);
	tap_is_str(t, buf, text, "format merges ranges");
	CPU_ZERO(&set);
	opt_cpulist_format(&set, buf, sizeof(buf));
	tap_is_str(t, buf, "", "empty set formats as empty");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		rc = opt_cpulist_try(bad[i], &set, err, sizeof(err));
		tap_ok(t, rc == -1 && err[0], "cpulist '%s' refused: %s",
		       bad[i], err);
	}
}

enum exiting_call { CALL_DURATION, CALL_U64, CALL_CHOICE, CALL_CPULIST,
		    CALL_ALLOWED, CALL_SIZE, CALL_DOUBLE };

/* In a child: make one exiting parser call that must fail. */
static void call_exiting(enum exiting_call which)
{
	static const char *const choices[] = { "fifo", "rr", NULL };
	cpu_set_t set;

	switch (which) {
	case CALL_DURATION:
		opt_duration("--interval", "5parsecs", "us");
		break;
	case CALL_U64:
		opt_u64("--priority", "200", 1, 99);
		break;
	case CALL_CHOICE:
		opt_choice("--policy", "batch", choices);
		break;
	case CALL_CPULIST:
		opt_cpulist("--cpus", "3-1", &set);
		break;
	case CALL_ALLOWED:
		opt_cpulist("--cpus", "0-1023", &set);
		opt_cpulist_allowed("--cpus", "0-1023", &set);
		break;
	case CALL_SIZE:
		opt_size("--size", "12X");
		break;
	case CALL_DOUBLE:
		opt_double("--duty", "150", 0, 100);
		break;
	}
	_exit(0);	/* the call returned: wrong */
}

/* Fork, run the failing call, check exit 2 and one line naming the option. */
static void test_exiting(struct tap *t, enum exiting_call which,
			 const char *want)
{
	char line[512] = "";
	int fds[2], status = 0;
	ssize_t n, len = 0;
	pid_t pid;

	if (pipe(fds)) {
		tap_ok(t, false, "pipe for %s", want);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 2);
		call_exiting(which);
	}
	close(fds[1]);
	while ((n = read(fds[0], line + len, sizeof(line) - 1 - (size_t)len)) > 0)
		len += n;
	line[len] = '\0';
	close(fds[0]);
	waitpid(pid, &status, 0);
	tap_ok(t, WIFEXITED(status) && WEXITSTATUS(status) == 2,
	       "%s exits 2", want);
	tap_ok(t, !strncmp(line, want, strlen(want)) &&
	       strchr(line, '\n') == line + len - 1,
	       "one line starting '%s': %.*s", want, (int)(len ? len - 1 : 0),
	       line);
}

int main(void)
{
	struct tap t = { 0, 0 };

	test_durations_ok(&t);
	test_durations_bad(&t);
	test_numbers(&t);
	test_sizes(&t);
	test_cpulists(&t);
	test_exiting(&t, CALL_DURATION, "rtprobe: --interval '5parsecs': ");
	test_exiting(&t, CALL_U64, "rtprobe: --priority '200': ");
	test_exiting(&t, CALL_CHOICE, "rtprobe: --policy 'batch': ");
	test_exiting(&t, CALL_CPULIST, "rtprobe: --cpus '3-1': ");
	test_exiting(&t, CALL_ALLOWED, "rtprobe: --cpus '0-1023': ");
	test_exiting(&t, CALL_SIZE, "rtprobe: --size '12X': ");
	test_exiting(&t, CALL_DOUBLE, "rtprobe: --duty '150': ");
	return tap_done(&t);
}
