// SPDX-License-Identifier: MIT
/*
 * test_memsize.c - the mem load's buffer (load.h, load_mem_buffer_bytes):
 * 4 x the last-level cache, 32 MiB when unknown, --buffer as given, and a
 * tiny cache (an emulated MIPS 4Kc reports 2 KiB) still gives each worker
 * its two 64 KiB chunks instead of a usage error.
 */
#include "load.h"
#include "tap.h"

#define KIB 1024ULL
#define MIB (1024 * KIB)

int main(void)
{
	struct tap t = { 0, 0 };

	tap_is_u64(&t, load_mem_buffer_bytes(false, 0, true, 8 * MIB, 1),
		   32 * MIB, "4 x an 8 MiB last-level cache");
	tap_is_u64(&t, load_mem_buffer_bytes(false, 0, false, 0, 1), 32 * MIB,
		   "32 MiB when the cache is unknown");
	tap_is_u64(&t, load_mem_buffer_bytes(true, 256 * KIB, true, 8 * MIB, 1),
		   256 * KIB, "--buffer as given");
	tap_is_u64(&t, load_mem_buffer_bytes(false, 0, true, 2 * KIB, 1),
		   128 * KIB, "a 2 KiB cache: two 64 KiB chunks");
	tap_is_u64(&t, load_mem_buffer_bytes(false, 0, true, 2 * KIB, 3),
		   384 * KIB, "two chunks for each of 3 workers");
	return tap_done(&t);
}
