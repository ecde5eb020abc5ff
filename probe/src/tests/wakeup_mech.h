/* SPDX-License-Identifier: MIT */
/*
 * wakeup_mech.h - the wake-up mechanisms measured by `rtprobe wakeup`.
 *
 * A wake channel carries one kind of wake-up from a waker to a wakee, between
 * two threads or two processes.  It lives in memory shared by both sides
 * (an anonymous MAP_SHARED mapping made before fork), so the same code serves
 * both modes; process-shared attributes are used only in process mode.
 *
 * wake_post() takes the waker's timestamp immediately before the wake call;
 * wake_wait() takes the wakee's immediately after the blocking call returns.
 * Every mechanism counts its wake-ups, so a wake-up that arrives before the
 * wakee blocks is never lost (it just does not block).
 */
#ifndef RTP_WAKEUP_MECH_H
#define RTP_WAKEUP_MECH_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <mqueue.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

enum wake_mech {
	MECH_CONDVAR, MECH_FUTEX, MECH_PIPE, MECH_EVENTFD, MECH_SIGNAL,
	MECH_SIGWAIT, MECH_MQ, MECH_SEM, MECH_SYSVSEM, MECH_UNIX, MECH_COUNT
};

/* Mechanism names as given to --mechanism, indexed by enum wake_mech. */
extern const char *const wake_mech_names[];

struct wake_channel {
	enum wake_mech mech;
	bool processes;          /* process-shared objects */
	clockid_t clock;         /* timestamps of both sides */
	/* condvar */
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint64_t posted, taken;
	/* futex */
	_Atomic uint32_t futex_word;
	uint32_t futex_seen;     /* wakee side only */
	/* sem */
	sem_t sem;
	bool sem_ready, mutex_ready;
	/* pipe, unix: fds[0] read by the wakee, fds[1] written by the waker;
	 * eventfd: both the same descriptor */
	int fds[2];
	mqd_t mq;
	int semid;
	/* signal, sigwait: the wakee (filled by wake_wakee_init) */
	int signo;
	pthread_t wakee_thread;
	pid_t wakee_pid;
	/* wakee side: sigwait's set, or sigsuspend's mask (signo unblocked) */
	sigset_t wait_set;
};

/* Signals used by the signal and sigwait mechanisms. */
int wake_signal_number(enum wake_mech mech);

/*
 * Process-wide set-up, in the main thread before any thread starts: block
 * both wake signals (threads and children inherit the mask) and install the
 * empty handler of the signal mechanism.  0 or -1 with err set.
 */
int wake_process_init(char *err, size_t errlen);

/* Create the kernel objects of one channel; 0 or -1 with err naming the call. */
int wake_channel_open(struct wake_channel *ch, enum wake_mech mech,
		      bool processes, clockid_t clock, char *err,
		      size_t errlen);

/* Release what wake_channel_open created; safe on a half-opened channel. */
void wake_channel_close(struct wake_channel *ch);

/* Called by the wakee (thread or process) before its first wait; 0 or errno. */
int wake_wakee_init(struct wake_channel *ch);

/* Wake the wakee; *t_before_ns is taken just before the call. 0 or errno. */
int wake_post(struct wake_channel *ch, uint64_t *t_before_ns);

/* Block until woken; *t_after_ns is taken just after. 0 or errno. */
int wake_wait(struct wake_channel *ch, uint64_t *t_after_ns);

/* Futex wait (timeout 0: none; 0 or errno) and wake-all, also used by wakeup.c. */
int wake_futex_wait(_Atomic uint32_t *word, uint32_t expected, bool shared,
		    uint64_t timeout_ns);
void wake_futex_wake(_Atomic uint32_t *word, bool shared);

#endif /* RTP_WAKEUP_MECH_H */
