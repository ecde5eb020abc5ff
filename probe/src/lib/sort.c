// SPDX-License-Identifier: MIT
/*
 * sort.c - in-place heapsort, O(n log n) in every case (see sort.h).
 */
#include "sort.h"

/* Exchange the size bytes at a and b. */
static void swap_bytes(unsigned char *a, unsigned char *b, size_t size)
{
	while (size--) {
		unsigned char t = *a;

		*a++ = *b;
		*b++ = t;
	}
}

/* Move element i down the max-heap of the first n elements to its place. */
static void sift_down(unsigned char *base, size_t i, size_t n, size_t size,
		      int (*cmp)(const void *, const void *))
{
	for (;;) {
		size_t big = i, child = 2 * i + 1;

		if (child < n && cmp(base + child * size, base + big * size) > 0)
			big = child;
		child++;
		if (child < n && cmp(base + child * size, base + big * size) > 0)
			big = child;
		if (big == i)
			return;
		swap_bytes(base + i * size, base + big * size, size);
		i = big;
	}
}

void sort_heap(void *base, size_t n, size_t size,
	       int (*cmp)(const void *, const void *))
{
	unsigned char *b = base;
	size_t i;

	for (i = n / 2; i-- > 0;)
		sift_down(b, i, n, size, cmp);
	while (n > 1) {
		n--;
		swap_bytes(b, b + n * size, size);
		sift_down(b, 0, n, size, cmp);
	}
}
