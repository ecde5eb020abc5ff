// SPDX-License-Identifier: MIT
/*
 * hist.c - the log-linear "loglin7" latency histogram (layout in hist.h).
 */
#include "hist.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* Smallest value that maps to bucket index i (UINT64_MAX past the end). */
uint64_t hist_lower(unsigned int i)
{
	unsigned int shift, sub;

	if (i < HIST_SUB)
		return i;
	if (i >= HIST_BUCKETS)
		return UINT64_MAX;
	shift = (i - HIST_SUB) / HIST_SUB;	/* k - 7 */
	sub = (i - HIST_SUB) % HIST_SUB;
	return (uint64_t)(HIST_SUB + sub) << shift;
}

/* Largest value that maps to bucket index i (UINT64_MAX past the end). */
uint64_t hist_upper(unsigned int i)
{
	unsigned int shift;

	if (i < HIST_SUB)
		return i;
	if (i >= HIST_BUCKETS)
		return UINT64_MAX;
	shift = (i - HIST_SUB) / HIST_SUB;
	return hist_lower(i) + ((1ULL << shift) - 1);
}

/* Zero every counter of a 64-bit histogram. */
void hist_clear(struct hist *h)
{
	memset(h->count, 0, sizeof(h->count));
}

/* Zero every counter of a 32-bit window histogram. */
void hist32_clear(struct hist32 *h)
{
	memset(h->count, 0, sizeof(h->count));
}

/* dst += src, bucket by bucket. */
void hist_merge(struct hist *dst, const struct hist *src)
{
	unsigned int i;

	for (i = 0; i < HIST_BUCKETS; i++)
		dst->count[i] += src->count[i];
}

/* dst += src for a 32-bit window histogram. */
void hist_merge32(struct hist *dst, const struct hist32 *src)
{
	unsigned int i;

	for (i = 0; i < HIST_BUCKETS; i++)
		dst->count[i] += src->count[i];
}

/* Total number of samples in the histogram. */
uint64_t hist_total(const struct hist *h)
{
	uint64_t total = 0;
	unsigned int i;

	for (i = 0; i < HIST_BUCKETS; i++)
		total += h->count[i];
	return total;
}

/*
 * The rank ceil(q * n), at least 1 and at most n.  q * n is computed in double;
 * when the product lands a few ulps above an integer only because q is not
 * exactly representable (0.07 * 100 = 7.000000000000001), that integer is
 * taken, so the rank is what the decimal q means.  The host does the same.
 */
static uint64_t hist_rank(double q, uint64_t n)
{
	double x = q * (double)n;
	double r = ceil(x);

	if (r >= 2.0 && r - 1.0 >= x * (1.0 - 8.0 * DBL_EPSILON))
		r -= 1.0;
	if (r < 1.0)
		return 1;
	if (r >= (double)n)
		return n;
	return (uint64_t)r;
}

/*
 * The q-quantile: lower bound of the first bucket whose cumulative count
 * reaches ceil(q * n), clamped to [min_ns, max_ns]; 0 when empty.
 */
uint64_t hist_quantile(const struct hist *h, double q, uint64_t min_ns,
		       uint64_t max_ns)
{
	uint64_t n = hist_total(h), rank, cum = 0, v = 0;
	unsigned int i;

	if (!n)
		return 0;
	if (!(q >= 0.0))
		q = 0.0;
	if (q > 1.0)
		q = 1.0;
	rank = hist_rank(q, n);
	for (i = 0; i < HIST_BUCKETS; i++) {
		cum += h->count[i];
		if (cum >= rank) {
			v = hist_lower(i);
			break;
		}
	}
	if (v < min_ns)
		v = min_ns;
	if (v > max_ns)
		v = max_ns;
	return v;
}
