/* SPDX-License-Identifier: MIT */
/*
 * footprint.h - how big rtprobe is and how much memory a run took.
 *
 * Written into every result record as "footprint", so a stored run says
 * what the measuring tool cost the board (the RTAI study's headline was
 * its 122 KiB image and 370 KiB footprint):
 *   binary_bytes          size of the running executable (/proc/self/exe)
 *   peak_rss_kib          this process's peak resident set (VmHWM)
 *   locked_kib            memory locked by mlockall at the end (VmLck)
 *   children_peak_rss_kib the largest peak resident set among the child
 *                         processes already waited for (getrusage
 *                         RUSAGE_CHILDREN): load workers, ring processes
 * A figure the kernel does not give is null.
 */
#ifndef RTP_FOOTPRINT_H
#define RTP_FOOTPRINT_H

struct json;

/* Write the "footprint" object of the current process into j. */
void footprint_write(struct json *j);

#endif /* RTP_FOOTPRINT_H */
