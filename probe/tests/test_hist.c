// SPDX-License-Identifier: MIT
/*
 * test_hist.c - the loglin7 histogram: bucket mapping, bounds, merge and
 * quantiles against exact order statistics.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "tap.h"

#ifndef RTP_TESTS_DIR
#define RTP_TESTS_DIR "tests"
#endif

/* A small xorshift generator so the data is reproducible. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* qsort comparator for uint64_t. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Index and bounds of chosen edge values. */
static void test_edges(struct tap *t)
{
	tap_is_int(t, HIST_BUCKETS, 7424, "7424 buckets");
	tap_ok(t, sizeof(struct hist) <= 65536, "histogram fits 64 KiB (%zu)",
	       sizeof(struct hist));
	tap_is_int(t, hist_index(0), 0, "index(0) = 0");
	tap_is_int(t, hist_index(1), 1, "index(1) = 1");
	tap_is_int(t, hist_index(127), 127, "index(127) = 127");
	tap_is_int(t, hist_index(128), 128, "index(128) = 128");
	tap_is_int(t, hist_index(255), 255, "index(255) = 255");
	tap_is_int(t, hist_index(256), 256, "index(256) = 256");
	tap_is_int(t, hist_index(257), 256, "index(257) = 256 (width 2)");
	tap_is_int(t, hist_index(1000), 506, "index(1000) = 506");
	tap_is_u64(t, hist_lower(506), 1000, "lower(506) = 1000");
	tap_is_u64(t, hist_upper(506), 1003, "upper(506) = 1003");
	tap_is_int(t, hist_index(UINT64_MAX), HIST_BUCKETS - 1,
		   "index(UINT64_MAX) is the last bucket");
	tap_is_u64(t, hist_upper(HIST_BUCKETS - 1), UINT64_MAX,
		   "upper(last) = UINT64_MAX");
	tap_is_u64(t, hist_lower(HIST_BUCKETS - 1), 255ULL << 56,
		   "lower(last) = 255 << 56");
	tap_is_u64(t, hist_lower(0), 0, "lower(0) = 0");
	tap_is_u64(t, hist_upper(127), 127, "upper(127) = 127");
	tap_is_u64(t, hist_lower(128), 128, "lower(128) = 128");
	tap_is_int(t, hist_index(1ULL << 63), 128 + 56 * 128,
		   "index(2^63) starts group 63");
}

/* Every bucket: bounds map back, are contiguous, relative width <= 1/128. */
static void test_all_buckets(struct tap *t)
{
	unsigned int i, bad_map = 0, bad_contig = 0, bad_width = 0;
	uint64_t lo, hi;

	for (i = 0; i < HIST_BUCKETS; i++) {
		lo = hist_lower(i);
		hi = hist_upper(i);
		if (lo > hi || hist_index(lo) != i || hist_index(hi) != i)
			bad_map++;
		if (i + 1 < HIST_BUCKETS && hist_lower(i + 1) != hi + 1)
			bad_contig++;
		/* width / lower <= 1/128, i.e. (hi - lo + 1) * 128 <= lo */
		if (i >= HIST_SUB &&
		    (hi - lo + 1) > lo / 128)
			bad_width++;
		if (i < HIST_SUB && hi != lo)
			bad_width++;
	}
	tap_is_int(t, bad_map, 0, "lower/upper of every bucket map back to it");
	tap_is_int(t, bad_contig, 0, "buckets are contiguous and increasing");
	tap_is_int(t, bad_width, 0, "relative bucket width <= 1/128");
}

/* Merging adds bucket by bucket, for 64- and 32-bit window histograms. */
static void test_merge(struct tap *t)
{
	struct hist *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct hist32 *w = calloc(1, sizeof(*w));
	uint64_t seed = 42, v;
	unsigned int i, bad = 0;

	if (!a || !b || !w) {
		tap_ok(t, false, "allocate histograms");
		goto out;
	}
	for (i = 0; i < 1000; i++) {
		v = next_rand(&seed) >> (next_rand(&seed) & 63);
		hist_add(a, v);
		hist_add(b, v / 3);
		hist32_add(w, v / 7);
	}
	tap_is_u64(t, hist_total(a), 1000, "total counts every sample");
	hist_merge(a, b);
	tap_is_u64(t, hist_total(a), 2000, "merge adds totals");
	hist_merge32(a, w);
	tap_is_u64(t, hist_total(a), 3000, "merge32 adds totals");
	hist_clear(a);
	seed = 42;
	for (i = 0; i < 1000; i++) {
		v = next_rand(&seed) >> (next_rand(&seed) & 63);
		hist_add(a, v);
	}
	hist_merge(b, a);
	hist_clear(a);
	seed = 42;
	for (i = 0; i < 1000; i++) {
		v = next_rand(&seed) >> (next_rand(&seed) & 63);
		hist_add(a, v);
		hist_add(a, v / 3);
	}
	for (i = 0; i < HIST_BUCKETS; i++)
		bad += a->count[i] != b->count[i];
	tap_is_int(t, bad, 0, "merge is order independent (same buckets)");
	hist32_clear(w);
	hist_clear(b);
	hist_merge32(b, w);
	tap_is_u64(t, hist_total(b), 0, "clear empties both kinds");
out:
	free(a);
	free(b);
	free(w);
}

/* Quantiles against exact order statistics on log-spread random data. */
static void test_quantiles(struct tap *t)
{
	static const double qs[] = { 0.0, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999,
				     0.9999, 1.0 };
	const size_t n = 200001;
	uint64_t *v = malloc(n * sizeof(*v));
	struct hist *h = calloc(1, sizeof(*h));
	uint64_t seed = 7, exact, got, rank;
	size_t i, k;

	if (!v || !h) {
		tap_ok(t, false, "allocate quantile data");
		goto out;
	}
	tap_is_u64(t, hist_quantile(h, 0.5, 0, UINT64_MAX), 0,
		   "empty histogram gives 0");
	for (i = 0; i < n; i++) {
		/* 10 ns .. ~10 s, roughly log-uniform */
		v[i] = 10 + (next_rand(&seed) >> (34 + next_rand(&seed) % 30));
		hist_add(h, v[i]);
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	for (k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
		rank = (uint64_t)(qs[k] * (double)n);
		if ((double)rank < qs[k] * (double)n)
			rank++;
		if (rank < 1)
			rank = 1;
		exact = v[rank - 1];
		got = hist_quantile(h, qs[k], v[0], v[n - 1]);
		tap_ok(t, got <= exact && exact - got <= exact / 128,
		       "q=%g: %" PRIu64 " within 1/128 below exact %" PRIu64,
		       qs[k], got, exact);
	}
	tap_is_u64(t, hist_quantile(h, 0.0, v[0], v[n - 1]), v[0],
		   "q=0 is the minimum");
	hist_clear(h);
	for (i = 1; i <= 100; i++)
		hist_add(h, i);
	/* 0.07 * 100 is 7.000000000000001 in binary: rank must still be 7 */
	tap_is_u64(t, hist_quantile(h, 0.07, 1, 100), 7,
		   "q=0.07 of 1..100 is 7 (decimal rank)");
	tap_is_u64(t, hist_quantile(h, 0.5, 1, 100), 50, "median of 1..100");
	tap_is_u64(t, hist_quantile(h, 1.0, 1, 100), 100, "q=1 of 1..100");
	hist_clear(h);
	hist_add(h, 1000003);
	tap_is_u64(t, hist_quantile(h, 0.5, 1000003, 1000003), 1000003,
		   "quantile clamped to observed min");
	tap_is_u64(t, hist_quantile(h, 0.5, 0, UINT64_MAX),
		   hist_lower(hist_index(1000003)),
		   "unclamped quantile is the bucket's lower bound");
out:
	free(v);
	free(h);
}

/*
 * The shared vectors (tests/hist_vectors.txt, also read by the host's
 * tests): value, index, lower, upper per line.
 */
static void test_vector_file(struct tap *t)
{
	const char *path = RTP_TESTS_DIR "/hist_vectors.txt";
	unsigned int n = 0, bad = 0, idx;
	uint64_t v, lo, hi;
	char line[256];
	FILE *f;

	f = fopen(path, "r");
	tap_ok(t, f != NULL, "open %s", path);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%" SCNu64 " %u %" SCNu64 " %" SCNu64, &v, &idx,
			   &lo, &hi) != 4) {
			bad++;
			tap_diag("unreadable vector: %s", line);
			continue;
		}
		n++;
		if (hist_index(v) != idx || hist_lower(idx) != lo ||
		    hist_upper(idx) != hi) {
			bad++;
			tap_diag("value %" PRIu64 ": index %u [%" PRIu64 ", %"
				 PRIu64 "], want %u [%" PRIu64 ", %" PRIu64 "]",
				 v, hist_index(v), hist_lower(hist_index(v)),
				 hist_upper(hist_index(v)), idx, lo, hi);
		}
	}
	fclose(f);
	tap_ok(t, n >= 100, "%u shared vectors read", n);
	tap_is_int(t, bad, 0, "every shared vector: index and bounds");
}

int main(void)
{
	struct tap t = { 0, 0 };

	test_edges(&t);
	test_all_buckets(&t);
	test_vector_file(&t);
	test_merge(&t);
	test_quantiles(&t);
	return tap_done(&t);
}
