/* SPDX-License-Identifier: MIT */
/*
 * sim.h - the seeded synthetic latency source behind --simulate.
 *
 * --simulate SEED[:DIST[,key=value...]] replaces the sleep and the clock of a
 * test with a deterministic stream of latencies, so every layer above rtprobe
 * can be tested exactly, without root or an RT kernel.  The stream is fully
 * specified here so the host's tests can recompute expected statistics.
 *
 * Generator: splitmix64.  Stream s of a run (s = series index 0, 1, ...) starts
 * from state = SEED + s * 2^48 * 0x9E3779B97F4A7C15 (mod 2^64), i.e. 2^48 draws
 * apart on the same splitmix64 sequence, so streams never overlap in practice
 * (2^48 draws is 9 years at a million samples a second); each draw does
 *   state += 0x9E3779B97F4A7C15; z = state;
 *   z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
 *   z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
 *   return z ^ (z >> 31);
 * and u = ((r >> 11) + 0.5) / 2^53 is a uniform double in (0, 1).
 *
 * Distributions (all values durations with units, default unit ns):
 *   const,lat=V             every sample is V                (draws nothing)
 *   uniform,min=A,max=B     A + r % (B - A + 1)              (one draw)
 *   expo,min=A,mean=M       A + llround(-M * log(u))         (one draw)
 *   normal,mean=M,sd=S      max(0, llround(M + S * sqrt(-2 log u1) * cos(2 pi u2)))
 *                           (two draws: u1 then u2)
 * Optional on any distribution:
 *   spike=V,every=N         sample n (counting from 1) with n % N == 0 is V
 *                           instead (the draw still happens, keeping the
 *                           stream aligned)
 *   setup=V                 (cyclic, ipc) each measuring thread is ready to
 *                           wait (ipc: its peer started) only V after t0, a
 *                           model of a slow set-up: a deadline before that
 *                           would be met at ready + latency (other tests
 *                           ignore it)
 * The default DIST is "expo,min=2us,mean=3us".
 * Examples: "--simulate 7", "--simulate 7:uniform,min=1us,max=9us",
 *           "--simulate 1:const,lat=5us,spike=500us,every=1000".
 */
#ifndef RTP_SIM_H
#define RTP_SIM_H

#include <stddef.h>
#include <stdint.h>

enum sim_dist { SIM_CONST, SIM_UNIFORM, SIM_EXPO, SIM_NORMAL };

struct sim_config {
	uint64_t seed;
	enum sim_dist dist;
	uint64_t a_ns; /* const: lat; uniform: min; expo: min; normal: mean */
	uint64_t b_ns; /* uniform: max; expo: mean; normal: sd */
	uint64_t spike_ns;
	uint64_t spike_every; /* 0: no spikes */
	uint64_t setup_ns;    /* cyclic: a thread is ready this long after t0 */
	char text[128];       /* the argument as given, for the start record */
};

struct sim_stream {
	uint64_t state;
	uint64_t n; /* samples drawn so far */
	const struct sim_config *cfg;
};

/* Parse "SEED[:DIST...]"; returns 0, or -1 with a reason in err. */
int sim_parse(const char *text, struct sim_config *cfg, char *err,
	      size_t errlen);

/* Start stream number stream_id of the configuration. */
void sim_stream_init(struct sim_stream *s, const struct sim_config *cfg,
		     uint64_t stream_id);

/* One splitmix64 draw. */
uint64_t sim_splitmix64(uint64_t *state);

/* Next synthetic latency in ns. */
uint64_t sim_next_ns(struct sim_stream *s);

/*
 * Whether flag (a "this run is simulated" value) holds.  A board build
 * (RTPROBE_BOARD) has no simulation: --simulate is refused, sim.c and
 * simmath.c are not built, and this is false, so the compiler drops every
 * simulated path (a call left to them fails the link).
 */
#ifdef RTPROBE_BOARD
#define SIMULATED(flag) (0 && (flag))
#else
#define SIMULATED(flag) (flag)
#endif

#endif /* RTP_SIM_H */
