/* SPDX-License-Identifier: MIT */
/*
 * rtprobe.h - project-wide constants: version, schema name, exit codes.
 *
 * Exit codes are shared with the host tool (docs/design.md, "Exit codes"):
 *   0 ran, no threshold crossed      1 a threshold or criterion failed
 *   2 bad usage or input             3 environment cannot run it
 *   4 interrupted (result still written with status "interrupted")
 */
#ifndef RTPROBE_H
#define RTPROBE_H

#define RTPROBE_VERSION "0.1.0"
#define RTPROBE_SCHEMA "rtprobe/1"

#define RTP_EXIT_OK 0
#define RTP_EXIT_FAIL 1
#define RTP_EXIT_USAGE 2
#define RTP_EXIT_ENV 3
#define RTP_EXIT_INTERRUPTED 4

/*
 * The words after "rtprobe: TEST: " (or "rtprobe: load KIND: ") that start an
 * exit-3 refusal of something this machine cannot run however it is asked
 * (too few CPUs, no C compiler): rtbench stores such a cell as inconclusive
 * with the rest of the line as its reason, not as an error (docs/rtprobe.md).
 */
#define NOT_APPLICABLE "not applicable here: "

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC 1000000000ULL

#endif /* RTPROBE_H */
