/* SPDX-License-Identifier: MIT */
/*
 * sort.h - an in-place heapsort with qsort's interface.
 *
 * For the few sorts done after a measurement (worst samples, per-size
 * results): a few hundred bytes of code instead of the C library's qsort,
 * which in Zig's musl is a 3-4 KiB pattern-defeating quicksort.
 */
#ifndef RTP_SORT_H
#define RTP_SORT_H

#include <stddef.h>

/* Sort n elements of size bytes at base in the order cmp gives (not stable). */
void sort_heap(void *base, size_t n, size_t size,
	       int (*cmp)(const void *, const void *));

#endif /* RTP_SORT_H */
