/* SPDX-License-Identifier: MIT */
/*
 * clocksleep.h - read a clock in nanoseconds, sleep until an absolute time.
 *
 * Inline because measuring threads call them right around the wake-up whose
 * delay they measure.
 *
 * Sleeping: the C library's clock_nanosleep is a cancellation point, so glibc
 * and musl wrap the system call in cancellation bookkeeping (glibc: about 30
 * instructions; musl: __syscall_cp, plus the time64 conversion on 32-bit
 * targets), and syscall(2) is a varargs function (about 60 instructions in a
 * size-optimised musl).  rtprobe never cancels a measuring thread, so on the
 * 64-bit targets whose kernel timespec is the C library's (two 64-bit fields)
 * and whose system call convention is a plain trap, clock_sleep_ts traps
 * directly: x86_64, aarch64, riscv64.  Everywhere else (32-bit targets, whose
 * musl has a 64-bit time_t and needs clock_nanosleep_time64 with a fallback)
 * the C library's clock_nanosleep does it.  Measured in BENCHMARKS.md
 * ("cyclic hot loop: every build against cyclictest").
 *
 * Reading the clock stays with the C library: its clock_gettime uses the
 * vDSO, which a system call cannot beat.
 */
#ifndef RTP_CLOCKSLEEP_H
#define RTP_CLOCKSLEEP_H

#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>

#include "rtprobe.h"

/* Current time on clock in ns (async-signal-safe: usable in forked children). */
static inline uint64_t clock_now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

#if defined(SYS_clock_nanosleep) && __SIZEOF_LONG__ == 8 && \
	(defined(__x86_64__) || defined(__aarch64__) || \
	 (defined(__riscv) && __riscv_xlen == 64))
#define RTP_RAW_NANOSLEEP 1

/* clock_nanosleep(clock, flags, ts, NULL) as one trap; 0 or an errno value. */
static inline int clock_sleep_ts(clockid_t clock, int flags,
				 const struct timespec *ts)
{
#if defined(__x86_64__)
	/* nr in rax, arguments in rdi rsi rdx r10; the trap clobbers rcx r11. */
	register long r10 __asm__("r10") = 0;
	long ret;

	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "a"((long)SYS_clock_nanosleep), "D"((long)clock),
			       "S"((long)flags), "d"(ts), "r"(r10)
			     : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	/* nr in x8, arguments and result in x0..x3. */
	register long x8 __asm__("x8") = SYS_clock_nanosleep;
	register long x0 __asm__("x0") = clock;
	register long x1 __asm__("x1") = flags;
	register const struct timespec *x2 __asm__("x2") = ts;
	register long x3 __asm__("x3") = 0;
	long ret;

	__asm__ __volatile__("svc 0"
			     : "+r"(x0)
			     : "r"(x8), "r"(x1), "r"(x2), "r"(x3)
			     : "memory");
	ret = x0;
#else
	/* RISC-V: nr in a7, arguments and result in a0..a3. */
	register long a7 __asm__("a7") = SYS_clock_nanosleep;
	register long a0 __asm__("a0") = clock;
	register long a1 __asm__("a1") = flags;
	register const struct timespec *a2 __asm__("a2") = ts;
	register long a3 __asm__("a3") = 0;
	long ret;

	__asm__ __volatile__("ecall"
			     : "+r"(a0)
			     : "r"(a7), "r"(a1), "r"(a2), "r"(a3)
			     : "memory");
	ret = a0;
#endif
	return (int)-ret;
}
#else
#define RTP_RAW_NANOSLEEP 0

/* clock_nanosleep(clock, flags, ts, NULL); 0 or an errno value. */
static inline int clock_sleep_ts(clockid_t clock, int flags,
				 const struct timespec *ts)
{
	return clock_nanosleep(clock, flags, ts, NULL);
}
#endif

/* The timespec of ns (a division: keep it off per-sample paths). */
static inline struct timespec ns_to_ts(uint64_t ns)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(ns / NSEC_PER_SEC);
	ts.tv_nsec = (long)(ns % NSEC_PER_SEC);
	return ts;
}

/* ts += by, both normalised (tv_nsec below a second): no division. */
static inline void ts_advance(struct timespec *ts, const struct timespec *by)
{
	ts->tv_sec += by->tv_sec;
	ts->tv_nsec += by->tv_nsec;
	if (ts->tv_nsec >= (long)NSEC_PER_SEC) {
		ts->tv_nsec -= (long)NSEC_PER_SEC;
		ts->tv_sec++;
	}
}

/* Sleep until abs_ns on clock, resuming after signals; 0 or an errno value. */
static inline int clock_sleep_until(clockid_t clock, uint64_t abs_ns)
{
	const struct timespec ts = ns_to_ts(abs_ns);
	int err;

	do
		err = clock_sleep_ts(clock, TIMER_ABSTIME, &ts);
	while (err == EINTR);
	return err;
}

#endif /* RTP_CLOCKSLEEP_H */
