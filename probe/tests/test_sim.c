// SPDX-License-Identifier: MIT
/*
 * test_sim.c - the --simulate source follows sim.h to the letter: the
 * splitmix64 stream, the distributions, spikes and the DIST parser.
 */
#include <math.h>
#include <stdlib.h>

#include "sim.h"
#include "tap.h"

/* Reference splitmix64 written from the spec in sim.h, for comparison. */
static uint64_t ref_next(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* Parse a spec that must be valid; reports failure. */
static bool parse_ok(struct tap *t, const char *text, struct sim_config *cfg)
{
	char err[200] = "";
	int rc = sim_parse(text, cfg, err, sizeof(err));

	if (rc)
		tap_diag("sim_parse('%s'): %s", text, err);
	return tap_ok(t, rc == 0, "parse '%s'", text);
}

/* First outputs for seeds 0 and 1 (published values and our reference). */
static void test_splitmix(struct tap *t)
{
	uint64_t s = 0, r = 0, a, b;
	int i, bad = 0;

	tap_is_u64(t, sim_splitmix64(&s), 0xE220A8397B1DCDAFULL,
		   "seed 0, draw 1");
	tap_is_u64(t, sim_splitmix64(&s), 0x6E789E6AA1B965F4ULL,
		   "seed 0, draw 2");
	s = 1;
	tap_is_u64(t, sim_splitmix64(&s), 0x910A2DEC89025CC1ULL,
		   "seed 1, draw 1");
	tap_is_u64(t, sim_splitmix64(&s), 0xBEEB8DA1658EEC67ULL,
		   "seed 1, draw 2");
	s = 12345;
	r = 12345;
	for (i = 0; i < 1000; i++) {
		a = sim_splitmix64(&s);
		b = ref_next(&r);
		bad += a != b;
	}
	tap_is_int(t, bad, 0, "1000 draws equal the reference");
}

/* Streams: stream s starts at seed + s * 2^48 * golden, far from stream 0. */
static void test_streams(struct tap *t)
{
	struct sim_config cfg;
	struct sim_stream s0, s1;

	if (!parse_ok(t, "0:uniform,min=0ns,max=18446744073ns", &cfg))
		return;
	sim_stream_init(&s0, &cfg, 0);
	sim_stream_init(&s1, &cfg, 1);
	tap_is_u64(t, s1.state, 0x9E3779B97F4A7C15ULL << 48,
		   "stream 1 state = seed + 2^48 * golden");
	sim_next_ns(&s0);
	tap_ok(t, s0.state != s1.state,
	       "stream 1 does not start where stream 0's first draw left off");
	tap_ok(t, sim_next_ns(&s1) != sim_next_ns(&s0),
	       "so its first value differs from stream 0's second");
	tap_is_u64(t, s0.n, 2, "samples drawn are counted");
}

/* Expected values computed independently (Python from the spec). */
static void test_distributions(struct tap *t)
{
	static const uint64_t uni[] = { 3613, 2095, 6922 };
	static const uint64_t expo[] = { 4826, 14261, 2314 };
	static const uint64_t normal[] = { 6365, 4603, 5004 };
	struct sim_config cfg;
	struct sim_stream s;
	uint64_t state, r, v, lo = UINT64_MAX, hi = 0;
	int i, bad = 0, zeros = 0;
	double u;

	if (parse_ok(t, "7:uniform,min=1us,max=9us", &cfg)) {
		sim_stream_init(&s, &cfg, 0);
		for (i = 0; i < 3; i++)
			tap_is_u64(t, sim_next_ns(&s), uni[i],
				   "uniform seed 7 value");
	}
	if (parse_ok(t, "7:expo,min=2us,mean=3us", &cfg)) {
		sim_stream_init(&s, &cfg, 0);
		state = 7;
		for (i = 0; i < 3; i++) {
			r = ref_next(&state);
			u = ((double)(r >> 11) + 0.5) / 9007199254740992.0;
			v = sim_next_ns(&s);
			tap_is_u64(t, v, expo[i], "expo seed 7 value");
			tap_is_u64(t, v, 2000 + (uint64_t)llround(-3000.0 * log(u)),
				   "expo matches the formula");
		}
	}
	if (parse_ok(t, "7:normal,mean=5us,sd=1us", &cfg)) {
		sim_stream_init(&s, &cfg, 0);
		for (i = 0; i < 3; i++)
			tap_is_u64(t, sim_next_ns(&s), normal[i],
				   "normal seed 7 value (two draws each)");
	}
	if (parse_ok(t, "3:normal,mean=0,sd=1ms", &cfg)) {
		sim_stream_init(&s, &cfg, 0);
		for (i = 0; i < 1000; i++)
			zeros += sim_next_ns(&s) == 0;
		tap_ok(t, zeros > 400 && zeros < 600,
		       "normal clamps negatives to 0 (%d of 1000)", zeros);
	}
	if (parse_ok(t, "5:uniform,min=1,max=3", &cfg)) {
		sim_stream_init(&s, &cfg, 0);
		for (i = 0; i < 10000; i++) {
			v = sim_next_ns(&s);
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
			bad += v < 1 || v > 3;
		}
		tap_ok(t, !bad && lo == 1 && hi == 3,
		       "uniform stays in [min, max] and reaches both ends");
	}
	if (parse_ok(t, "9", &cfg))
		tap_ok(t, cfg.seed == 9 && cfg.dist == SIM_EXPO &&
		       cfg.a_ns == 2000 && cfg.b_ns == 3000,
		       "default DIST is expo,min=2us,mean=3us");
}

/* const draws nothing; spikes replace every Nth sample, stream aligned. */
static void test_const_and_spikes(struct tap *t)
{
	struct sim_config cfg, plain;
	struct sim_stream s, p;
	uint64_t v, pv;
	int i, bad = 0;

	if (parse_ok(t, "1:const,lat=5us,spike=500us,every=4", &cfg)) {
		sim_stream_init(&s, &cfg, 0);
		for (i = 1; i <= 12; i++) {
			v = sim_next_ns(&s);
			bad += v != (i % 4 == 0 ? 500000u : 5000u);
		}
		tap_is_int(t, bad, 0, "const 5us with 500us every 4th sample");
		tap_is_u64(t, s.state, 1, "const draws nothing");
		tap_is_str(t, cfg.text, "1:const,lat=5us,spike=500us,every=4",
			   "argument kept as given");
	}
	if (parse_ok(t, "4:uniform,min=1us,max=2us,spike=1ms,every=2", &cfg) &&
	    parse_ok(t, "4:uniform,min=1us,max=2us", &plain)) {
		sim_stream_init(&s, &cfg, 0);
		sim_stream_init(&p, &plain, 0);
		bad = 0;
		for (i = 1; i <= 100; i++) {
			v = sim_next_ns(&s);
			pv = sim_next_ns(&p);
			bad += i % 2 ? v != pv : v != 1000000;
		}
		tap_is_int(t, bad, 0,
			   "spikes still draw: other samples stay aligned");
	}
}

/* setup=V (the cyclic model of a slow set-up) parses on every distribution. */
static void test_setup_key(struct tap *t)
{
	struct sim_config cfg;

	if (parse_ok(t, "1:const,lat=5us,setup=50ms", &cfg))
		tap_is_u64(t, cfg.setup_ns, 50000000, "const setup=50ms");
	if (parse_ok(t, "2:expo,min=1us,mean=2us,spike=1ms,every=9,setup=3ms",
		     &cfg))
		tap_ok(t, cfg.setup_ns == 3000000 && cfg.spike_every == 9,
		       "expo with spikes and setup=3ms");
	if (parse_ok(t, "3:uniform,min=1us,max=2us", &cfg))
		tap_is_u64(t, cfg.setup_ns, 0, "no setup: 0");
}

/* Bad specifications are refused with a reason. */
static void test_parse_errors(struct tap *t)
{
	static const char *const bad[] = {
		"", "x", "-1", "7:", "7:gauss", "7:uniform,min=1us",
		"7:uniform,min=9us,max=1us", "7:const,lat=5us,spike=1us",
		"7:const,lat=5us,every=3", "7:const,lat=5parsecs",
		"7:const,lat=5us,foo=1", "7:const,lat=5us,lat=6us",
		"7:const,lat", "7:const,lat=1us,every=0,spike=1us",
		"7:const,lat=-1us", "7:expo,mean=3us", "7:normal,sd=1us",
		"7:const,lat=2000000s", "18446744073709551616",
		"7:const,lat=1us,min=2us", "7:const,,lat=1us", "7:const,lat=1us,",
		"7:const,lat=1us:", "7:uniform,min=,max=1us",
		"7:const,lat=1us,setup=1us,setup=2us", "7:const,lat=1us,setup=x",
		"1:const,lat=1us,spike=1us,every=1,xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		"xxxxxxxxxxxxxxxxxxxxxx",
	};
	struct sim_config cfg;
	char err[200];
	size_t i;
	int rc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		rc = sim_parse(bad[i], &cfg, err, sizeof(err));
		tap_ok(t, rc == -1 && err[0], "refuse '%.40s': %s", bad[i],
		       err);
	}
}

int main(void)
{
	struct tap t = { 0, 0 };

	test_splitmix(&t);
	test_streams(&t);
	test_distributions(&t);
	test_const_and_spikes(&t);
	test_setup_key(&t);
	test_parse_errors(&t);
	return tap_done(&t);
}
