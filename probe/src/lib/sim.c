// SPDX-License-Identifier: MIT
/*
 * sim.c - the seeded synthetic latency source behind --simulate (see sim.h,
 * which is the specification the host recomputes from).
 */
#include "sim.h"

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fmt.h"
#include "opt.h"
#include "simmath.h"

#define SIM_GOLDEN 0x9E3779B97F4A7C15ULL
/* Largest accepted duration: keeps every formula far from 64-bit overflow. */
#define SIM_MAX_NS (1000000ULL * 1000000000ULL)

/* Write a formatted reason into err and return -1. */
__attribute__((format(__printf__, 3, 4)))
static int sim_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		fmt_vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

struct sim_key {
	const char *name;
	bool seen;
	uint64_t value;
};

/* Parse "key=value" pairs separated by commas into keys; -1 with err. */
static int sim_parse_keys(char *list, struct sim_key *keys, const char *dist,
			  char *err, size_t errlen)
{
	char *item, *next, *eq;
	char why[160];
	struct sim_key *k;

	for (item = list; item; item = next) {
		next = strchr(item, ',');
		if (next)
			*next++ = '\0';
		eq = strchr(item, '=');
		if (!eq)
			return sim_err(err, errlen,
				       "expected key=value, got '%s'", item);
		*eq = '\0';
		for (k = keys; k->name; k++)
			if (!strcmp(k->name, item))
				break;
		if (!k->name)
			return sim_err(err, errlen,
				       "unknown key '%s' for %s", item, dist);
		if (k->seen)
			return sim_err(err, errlen, "key '%s' given twice",
				       item);
		if (!strcmp(k->name, "every")) {
			if (opt_u64_try(eq + 1, 1, UINT64_MAX, &k->value, why,
					sizeof(why)))
				return sim_err(err, errlen, "every=%s: %s",
					       eq + 1, why);
		} else {
			if (opt_duration_try(eq + 1, "ns", &k->value, why,
					     sizeof(why)))
				return sim_err(err, errlen, "%s=%s: %s",
					       item, eq + 1, why);
			if (k->value > SIM_MAX_NS)
				return sim_err(err, errlen,
					       "%s=%s: at most 1000000s",
					       item, eq + 1);
		}
		k->seen = true;
	}
	return 0;
}

/* Parse "SEED[:DIST[,key=value...]]" into cfg; -1 with a reason in err. */
int sim_parse(const char *text, struct sim_config *cfg, char *err,
	      size_t errlen)
{
	static const char *const dists[] = { "const", "uniform", "expo",
					     "normal", NULL };
	static const char *const first_key[] = { "lat", "min", "min", "mean" };
	static const char *const second_key[] = { NULL, "max", "mean", "sd" };
	char buf[sizeof(cfg->text)], seed_text[32], why[160];
	char *colon, *dist, *comma;
	struct sim_key keys[6];
	size_t seed_len;
	int d;

	if (!text || !*text)
		return sim_err(err, errlen, "empty; expected SEED[:DIST]");
	if (strlen(text) >= sizeof(buf))
		return sim_err(err, errlen, "longer than %zu characters",
			       sizeof(buf) - 1);
	memset(cfg, 0, sizeof(*cfg));
	strcpy(cfg->text, text);
	strcpy(buf, text);
	colon = strchr(buf, ':');
	seed_len = colon ? (size_t)(colon - buf) : strlen(buf);
	if (seed_len >= sizeof(seed_text))
		return sim_err(err, errlen, "seed too long");
	memcpy(seed_text, buf, seed_len);
	seed_text[seed_len] = '\0';
	if (opt_u64_try(seed_text, 0, UINT64_MAX, &cfg->seed, why,
			sizeof(why)))
		return sim_err(err, errlen, "seed '%s': %s", seed_text, why);
	if (!colon) {
		/* The default distribution: expo,min=2us,mean=3us. */
		cfg->dist = SIM_EXPO;
		cfg->a_ns = 2000;
		cfg->b_ns = 3000;
		return 0;
	}
	dist = colon + 1;
	comma = strchr(dist, ',');
	if (comma)
		*comma = '\0';
	for (d = 0; dists[d]; d++)
		if (!strcmp(dists[d], dist))
			break;
	if (!dists[d])
		return sim_err(err, errlen, "unknown distribution '%s' "
			       "(use const, uniform, expo or normal)", dist);
	memset(keys, 0, sizeof(keys));
	keys[0].name = first_key[d];
	keys[1].name = second_key[d] ? second_key[d] : "spike";
	keys[2].name = second_key[d] ? "spike" : "every";
	keys[3].name = second_key[d] ? "every" : "setup";
	keys[4].name = second_key[d] ? "setup" : NULL;
	if (comma && sim_parse_keys(comma + 1, keys, dists[d], err, errlen))
		return -1;
	cfg->dist = (enum sim_dist)d;
	if (!keys[0].seen || (second_key[d] && !keys[1].seen))
		return sim_err(err, errlen, "%s needs %s=%s%s%s", dists[d],
			       first_key[d], second_key[d] ? " and " : "",
			       second_key[d] ? second_key[d] : "",
			       second_key[d] ? "=" : "");
	cfg->a_ns = keys[0].value;
	if (second_key[d])
		cfg->b_ns = keys[1].value;
	{
		const struct sim_key *spike = &keys[second_key[d] ? 2 : 1];
		const struct sim_key *every = &keys[second_key[d] ? 3 : 2];

		if (spike->seen != every->seen)
			return sim_err(err, errlen,
				       "spike=V and every=N go together");
		cfg->spike_ns = spike->value;
		cfg->spike_every = every->seen ? every->value : 0;
		cfg->setup_ns = keys[second_key[d] ? 4 : 3].value;
	}
	if (cfg->dist == SIM_UNIFORM && cfg->a_ns > cfg->b_ns)
		return sim_err(err, errlen, "uniform needs min <= max");
	return 0;
}

/* Start stream stream_id: state = seed + (stream_id << 48) * golden (mod 2^64). */
void sim_stream_init(struct sim_stream *s, const struct sim_config *cfg,
		     uint64_t stream_id)
{
	s->state = cfg->seed + (stream_id << 48) * SIM_GOLDEN;
	s->n = 0;
	s->cfg = cfg;
}

/* One splitmix64 step: advance state and return the mixed value. */
uint64_t sim_splitmix64(uint64_t *state)
{
	uint64_t z;

	*state += SIM_GOLDEN;
	z = *state;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* A uniform double in (0, 1) from one draw: ((r >> 11) + 0.5) / 2^53. */
static double sim_uniform01(uint64_t *state)
{
	uint64_t r = sim_splitmix64(state);

	return ((double)(r >> 11) + 0.5) / 9007199254740992.0;
}

/* Next synthetic latency in ns, following sim.h to the letter. */
uint64_t sim_next_ns(struct sim_stream *s)
{
	const struct sim_config *cfg = s->cfg;
	uint64_t v = 0, span, r;
	double u1, u2, x;
	long long rounded;

	s->n++;
	switch (cfg->dist) {
	case SIM_CONST:
		v = cfg->a_ns;
		break;
	case SIM_UNIFORM:
		r = sim_splitmix64(&s->state);
		span = cfg->b_ns - cfg->a_ns + 1;
		v = cfg->a_ns + (span ? r % span : r);
		break;
	case SIM_EXPO:
		u1 = sim_uniform01(&s->state);
		x = -(double)cfg->b_ns * simmath_log(u1);
		v = cfg->a_ns + (uint64_t)llround(x);
		break;
	case SIM_NORMAL:
		u1 = sim_uniform01(&s->state);
		u2 = sim_uniform01(&s->state);
		x = (double)cfg->a_ns +
		    (double)cfg->b_ns * simmath_sqrt(-2.0 * simmath_log(u1)) *
		    simmath_cos_turn(u2);
		rounded = llround(x);
		v = rounded > 0 ? (uint64_t)rounded : 0;
		break;
	}
	if (cfg->spike_every && s->n % cfg->spike_every == 0)
		v = cfg->spike_ns;
	return v;
}
