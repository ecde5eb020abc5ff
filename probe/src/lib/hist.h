/* SPDX-License-Identifier: MIT */
/*
 * hist.h - the log-linear latency histogram shared by rtprobe and rtbench.
 *
 * Why this layout
 * ---------------
 * Latencies span nine orders of magnitude (a few ns for a clock read, seconds
 * for a stalled host) and we never want to drop or clamp a sample.  A linear
 * histogram fine enough for 1 us resolution cannot reach seconds; a purely
 * logarithmic one loses all detail.  So, like fio's stat.h and HdrHistogram,
 * each power of two is split into a fixed number of equal-width sub-buckets:
 * the absolute width of a bucket grows with the value, the *relative* width
 * stays bounded.
 *
 * The layout ("loglin7", HIST_SUB_BITS = 7, HIST_SUB = 128)
 * ---------------------------------------------------------
 * A value v (unsigned 64-bit nanoseconds) maps to a bucket index:
 *
 *   v < 128:             index = v                 (width 1 ns: exact)
 *   v >= 128:            k     = floor(log2(v))    (7 .. 63)
 *                        sub   = (v >> (k - 7)) & 127
 *                        index = 128 + (k - 7) * 128 + sub
 *
 * so group k (values in [2^k, 2^(k+1))) is cut into 128 buckets of width
 * 2^(k-7).  Bucket index i >= 128 covers
 *
 *   lower(i) = (128 + sub) << (k - 7),  upper(i) = lower(i) + 2^(k-7) - 1
 *   with k = 7 + (i - 128) / 128, sub = (i - 128) % 128
 *
 * e.g. 1000 ns is k = 9, sub = (1000 >> 2) & 127 = 122, index = 506,
 * bucket [1000, 1003].  The relative width is at most 2^(k-7) / 2^k = 1/128
 * (0.78 %), the number of buckets is 128 + 57 * 128 = 7424, and a histogram
 * of 64-bit counters takes 7424 * 8 = 59392 bytes (< 64 KiB).
 *
 * Quantiles: the q-quantile is the smallest bucket whose cumulative count
 * reaches ceil(q * n) (at least 1); it is reported as that bucket's lower
 * bound, clamped to the observed [min, max].  The error against the exact
 * order statistic is therefore below one bucket width: < 1/128 of the value.
 *
 * Histograms with the same layout are merged by adding counts bucket by
 * bucket: exact, associative, order-independent, so per-window histograms add
 * up to per-thread ones, and per-thread ones to a run's.
 *
 * On the wire (NDJSON) a histogram is a sparse list of [index, count] pairs in
 * increasing index order; the start record names the layout as
 * "hist_layout": "loglin7".  The host (rtbench/rtprobe/loglin7.py) implements
 * the same mapping; tests check both sides against shared vectors.
 */
#ifndef RTP_HIST_H
#define RTP_HIST_H

#include <stddef.h>
#include <stdint.h>

#define HIST_LAYOUT_NAME "loglin7"
#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS (HIST_SUB + (64 - HIST_SUB_BITS) * HIST_SUB) /* 7424 */

/* Full histogram with 64-bit counters (totals, merged results). */
struct hist {
	uint64_t count[HIST_BUCKETS];
};

/* Window histogram with 32-bit counters: one window never holds 2^32 samples. */
struct hist32 {
	uint32_t count[HIST_BUCKETS];
};

/*
 * Map a value in ns to its bucket index, without a branch: with
 * shift = max(0, floor(log2(v)) - 7), the index is shift * 128 + (v >> shift)
 * (for v >= 128, v >> shift is 128 + sub; for v < 128 it is v itself).
 */
static inline unsigned int hist_index(uint64_t v)
{
	const unsigned int shift =
		63u - HIST_SUB_BITS - (unsigned int)__builtin_clzll(v | HIST_SUB);

	return (shift << HIST_SUB_BITS) + (unsigned int)(v >> shift);
}

/* Smallest value that maps to bucket index i. */
uint64_t hist_lower(unsigned int i);

/* Largest value that maps to bucket index i. */
uint64_t hist_upper(unsigned int i);

/* Zero every counter. */
void hist_clear(struct hist *h);
void hist32_clear(struct hist32 *h);

/* Add one sample of value v. */
static inline void hist_add(struct hist *h, uint64_t v)
{
	h->count[hist_index(v)]++;
}

static inline void hist32_add(struct hist32 *h, uint64_t v)
{
	h->count[hist_index(v)]++;
}

/* dst += src, bucket by bucket. */
void hist_merge(struct hist *dst, const struct hist *src);
void hist_merge32(struct hist *dst, const struct hist32 *src);

/* Total number of samples. */
uint64_t hist_total(const struct hist *h);

/*
 * The q-quantile (0 <= q <= 1) as defined above, clamped to [min_ns, max_ns]
 * (pass 0 and UINT64_MAX when unknown).  Returns 0 for an empty histogram.
 */
uint64_t hist_quantile(const struct hist *h, double q, uint64_t min_ns,
		       uint64_t max_ns);

#endif /* RTP_HIST_H */
