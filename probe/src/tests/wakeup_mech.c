// SPDX-License-Identifier: MIT
/*
 * wakeup_mech.c - wake-up mechanisms for `rtprobe wakeup` (see wakeup_mech.h).
 */
#include "wakeup_mech.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clocksleep.h"
#include "fdio.h"
#include "fmt.h"
#include "rtprobe.h"

const char *const wake_mech_names[] = {
	"condvar", "futex", "pipe", "eventfd", "signal", "sigwait", "mq",
	"sem", "sysvsem", "unix", NULL,
};

/* Signals used by the signal and sigwait mechanisms. */
int wake_signal_number(enum wake_mech mech)
{
	return mech == MECH_SIGNAL ? SIGRTMIN + 1 : SIGRTMIN + 2;
}

/* The signal mechanism's handler: returning is all it has to do. */
static void wake_signal_handler(int signo)
{
	(void)signo;
}

/* Block the wake signals and install the empty handler. */
int wake_process_init(char *err, size_t errlen)
{
	struct sigaction sa;
	sigset_t set;
	int rc;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wake_signal_handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(wake_signal_number(MECH_SIGNAL), &sa, NULL)) {
		fmt_snprintf(err, errlen, "sigaction: %s", strerror(errno));
		return -1;
	}
	sigemptyset(&set);
	sigaddset(&set, wake_signal_number(MECH_SIGNAL));
	sigaddset(&set, wake_signal_number(MECH_SIGWAIT));
	rc = pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (rc) {
		fmt_snprintf(err, errlen, "pthread_sigmask: %s", strerror(rc));
		return -1;
	}
	return 0;
}

/* Wait on a futex word while it holds expected (timeout 0: forever). */
int wake_futex_wait(_Atomic uint32_t *word, uint32_t expected, bool shared,
		    uint64_t timeout_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_ns / NSEC_PER_SEC),
		.tv_nsec = (long)(timeout_ns % NSEC_PER_SEC),
	};
	int op = shared ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE;

	if (syscall(SYS_futex, word, op, expected, timeout_ns ? &ts : NULL,
		    NULL, 0))
		return errno;
	return 0;
}

/* Wake every waiter of a futex word. */
void wake_futex_wake(_Atomic uint32_t *word, bool shared)
{
	int op = shared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE;

	syscall(SYS_futex, word, op, INT_MAX, NULL, NULL, 0);
}

/* Write "call: strerror" into err and return -1. */
static int mech_fail(char *err, size_t errlen, const char *call, int errnum)
{
	fmt_snprintf(err, errlen, "%s: %s", call, strerror(errnum));
	return -1;
}

/* Initialise the condvar's mutex and condition variable. */
static int open_condvar(struct wake_channel *ch, char *err, size_t errlen)
{
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	int pshared = ch->processes ? PTHREAD_PROCESS_SHARED
				    : PTHREAD_PROCESS_PRIVATE;
	int rc;

	rc = pthread_mutexattr_init(&ma);
	if (!rc)
		rc = pthread_mutexattr_setpshared(&ma, pshared);
	if (!rc)
		rc = pthread_mutex_init(&ch->mutex, &ma);
	pthread_mutexattr_destroy(&ma);
	if (rc)
		return mech_fail(err, errlen, "pthread_mutex_init", rc);
	rc = pthread_condattr_init(&ca);
	if (!rc)
		rc = pthread_condattr_setpshared(&ca, pshared);
	if (!rc)
		rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!rc)
		rc = pthread_cond_init(&ch->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (rc) {
		pthread_mutex_destroy(&ch->mutex);
		return mech_fail(err, errlen, "pthread_cond_init", rc);
	}
	ch->mutex_ready = true;
	return 0;
}

/* Create a message queue, unlinked at once (the descriptor keeps it). */
static int open_mq(struct wake_channel *ch, char *err, size_t errlen)
{
	struct mq_attr attr = { .mq_maxmsg = 4, .mq_msgsize = 8 };
	char name[64];

	fmt_snprintf(name, sizeof(name), "/rtprobe-wakeup-%ld-%p", (long)getpid(),
		     (void *)ch);
	ch->mq = mq_open(name, O_RDWR | O_CREAT | O_EXCL, 0600, &attr);
	if (ch->mq == (mqd_t)-1)
		return mech_fail(err, errlen, "mq_open", errno);
	if (mq_unlink(name))
		return mech_fail(err, errlen, "mq_unlink", errno);
	return 0;
}

/* Create the kernel objects of one channel. */
int wake_channel_open(struct wake_channel *ch, enum wake_mech mech,
		      bool processes, clockid_t clock, char *err,
		      size_t errlen)
{
	memset(ch, 0, sizeof(*ch));
	ch->mech = mech;
	ch->processes = processes;
	ch->clock = clock;
	ch->fds[0] = ch->fds[1] = -1;
	ch->mq = (mqd_t)-1;
	ch->semid = -1;
	switch (mech) {
	case MECH_CONDVAR:
		return open_condvar(ch, err, errlen);
	case MECH_FUTEX:
		return 0;
	case MECH_PIPE:
		if (pipe2(ch->fds, O_CLOEXEC))
			return mech_fail(err, errlen, "pipe2", errno);
		return 0;
	case MECH_EVENTFD:
		ch->fds[0] = eventfd(0, EFD_CLOEXEC);
		if (ch->fds[0] < 0)
			return mech_fail(err, errlen, "eventfd", errno);
		ch->fds[1] = ch->fds[0];
		return 0;
	case MECH_SIGNAL:
	case MECH_SIGWAIT:
		ch->signo = wake_signal_number(mech);
		return 0;
	case MECH_MQ:
		return open_mq(ch, err, errlen);
	case MECH_SEM:
		if (sem_init(&ch->sem, processes, 0))
			return mech_fail(err, errlen, "sem_init", errno);
		ch->sem_ready = true;
		return 0;
	case MECH_SYSVSEM:
		ch->semid = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
		if (ch->semid < 0)
			return mech_fail(err, errlen, "semget", errno);
		return 0;
	case MECH_UNIX:
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
			       ch->fds))
			return mech_fail(err, errlen, "socketpair", errno);
		return 0;
	case MECH_COUNT:
		break;
	}
	fmt_snprintf(err, errlen, "unknown mechanism %d", (int)mech);
	return -1;
}

/* Release what wake_channel_open created. */
void wake_channel_close(struct wake_channel *ch)
{
	if (ch->mutex_ready) {
		pthread_cond_destroy(&ch->cond);
		pthread_mutex_destroy(&ch->mutex);
		ch->mutex_ready = false;
	}
	if (ch->sem_ready) {
		sem_destroy(&ch->sem);
		ch->sem_ready = false;
	}
	if (ch->fds[0] >= 0)
		close(ch->fds[0]);
	if (ch->fds[1] >= 0 && ch->fds[1] != ch->fds[0])
		close(ch->fds[1]);
	ch->fds[0] = ch->fds[1] = -1;
	if (ch->mq != (mqd_t)-1)
		mq_close(ch->mq);
	ch->mq = (mqd_t)-1;
	if (ch->semid >= 0)
		semctl(ch->semid, 0, IPC_RMID);
	ch->semid = -1;
}

/*
 * Record who the wakee is (signals are directed at it) and prepare the set
 * its signal waits use, so no wait needs a sigprocmask call of its own.
 */
int wake_wakee_init(struct wake_channel *ch)
{
	int rc;

	ch->wakee_thread = pthread_self();
	ch->wakee_pid = getpid();
	ch->futex_seen = atomic_load(&ch->futex_word);
	if (ch->mech == MECH_SIGWAIT) {
		sigemptyset(&ch->wait_set);
		sigaddset(&ch->wait_set, ch->signo);
	} else if (ch->mech == MECH_SIGNAL) {
		rc = pthread_sigmask(SIG_BLOCK, NULL, &ch->wait_set);
		if (rc)
			return rc;
		sigdelset(&ch->wait_set, ch->signo);
	}
	return 0;
}

/* Read one small message from fd; *t is taken right after read returns. */
static int read_token(int fd, void *buf, size_t len, clockid_t clock,
		      uint64_t *t)
{
	ssize_t n;

	do {
		n = read(fd, buf, len);
		*t = clock_now_ns(clock);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno;
	return n == (ssize_t)len ? 0 : EIO;
}

/* Wake the wakee; the timestamp is taken just before the wake call. */
int wake_post(struct wake_channel *ch, uint64_t *t_before_ns)
{
	uint64_t one = 1;
	struct sembuf up = { .sem_num = 0, .sem_op = 1, .sem_flg = 0 };
	int rc;

	switch (ch->mech) {
	case MECH_CONDVAR:
		rc = pthread_mutex_lock(&ch->mutex);
		if (rc)
			return rc;
		ch->posted++;
		rc = pthread_mutex_unlock(&ch->mutex);
		if (rc)
			return rc;
		*t_before_ns = clock_now_ns(ch->clock);
		return pthread_cond_signal(&ch->cond);
	case MECH_FUTEX:
		atomic_fetch_add(&ch->futex_word, 1);
		*t_before_ns = clock_now_ns(ch->clock);
		wake_futex_wake(&ch->futex_word, ch->processes);
		return 0;
	case MECH_PIPE:
	case MECH_UNIX:
		*t_before_ns = clock_now_ns(ch->clock);
		return fdio_write_full(ch->fds[1], "w", 1) ? errno : 0;
	case MECH_EVENTFD:
		*t_before_ns = clock_now_ns(ch->clock);
		return fdio_write_full(ch->fds[1], &one, sizeof(one)) ?
		       errno : 0;
	case MECH_SIGNAL:
	case MECH_SIGWAIT:
		*t_before_ns = clock_now_ns(ch->clock);
		if (ch->processes)
			return kill(ch->wakee_pid, ch->signo) ? errno : 0;
		return pthread_kill(ch->wakee_thread, ch->signo);
	case MECH_MQ:
		*t_before_ns = clock_now_ns(ch->clock);
		return mq_send(ch->mq, (const char *)&one, sizeof(one), 0) ?
			       errno : 0;
	case MECH_SEM:
		*t_before_ns = clock_now_ns(ch->clock);
		return sem_post(&ch->sem) ? errno : 0;
	case MECH_SYSVSEM:
		*t_before_ns = clock_now_ns(ch->clock);
		return semop(ch->semid, &up, 1) ? errno : 0;
	case MECH_COUNT:
		break;
	}
	return EINVAL;
}

/* Condvar wait: the predicate is posted != taken. */
static int wait_condvar(struct wake_channel *ch, uint64_t *t)
{
	int rc = pthread_mutex_lock(&ch->mutex);

	if (rc)
		return rc;
	*t = 0;
	while (ch->posted == ch->taken && !rc) {
		rc = pthread_cond_wait(&ch->cond, &ch->mutex);
		*t = clock_now_ns(ch->clock);
	}
	if (!*t)
		*t = clock_now_ns(ch->clock);
	ch->taken = ch->posted;
	pthread_mutex_unlock(&ch->mutex);
	return rc;
}

/* Futex wait: block while the word still holds the last value seen. */
static int wait_futex(struct wake_channel *ch, uint64_t *t)
{
	int rc;

	*t = 0;
	while (atomic_load(&ch->futex_word) == ch->futex_seen) {
		rc = wake_futex_wait(&ch->futex_word, ch->futex_seen,
				     ch->processes, 0);
		*t = clock_now_ns(ch->clock);
		if (rc && rc != EAGAIN && rc != EINTR)
			return rc;
	}
	if (!*t)
		*t = clock_now_ns(ch->clock);
	ch->futex_seen = atomic_load(&ch->futex_word);
	return 0;
}

/* Wait for the wake signal (sigwait) or for its handler to run (signal). */
static int wait_signal(struct wake_channel *ch, uint64_t *t)
{
	if (ch->mech == MECH_SIGWAIT) {
		int got;

		do {
			got = sigwaitinfo(&ch->wait_set, NULL);
			*t = clock_now_ns(ch->clock);
		} while (got < 0 && errno == EINTR);
		return got < 0 ? errno : 0;
	}
	/* Atomically unblock the signal and sleep until a handler ran. */
	sigsuspend(&ch->wait_set);
	*t = clock_now_ns(ch->clock);
	return errno == EINTR ? 0 : errno;
}

/* Block until woken; the timestamp is taken just after the blocking call. */
int wake_wait(struct wake_channel *ch, uint64_t *t_after_ns)
{
	struct sembuf down = { .sem_num = 0, .sem_op = -1, .sem_flg = 0 };
	char buf[8];
	int rc;

	switch (ch->mech) {
	case MECH_CONDVAR:
		return wait_condvar(ch, t_after_ns);
	case MECH_FUTEX:
		return wait_futex(ch, t_after_ns);
	case MECH_PIPE:
	case MECH_UNIX:
		return read_token(ch->fds[0], buf, 1, ch->clock, t_after_ns);
	case MECH_EVENTFD:
		return read_token(ch->fds[0], buf, 8, ch->clock, t_after_ns);
	case MECH_SIGNAL:
	case MECH_SIGWAIT:
		return wait_signal(ch, t_after_ns);
	case MECH_MQ:
		do {
			rc = (int)mq_receive(ch->mq, buf, sizeof(buf), NULL);
			*t_after_ns = clock_now_ns(ch->clock);
		} while (rc < 0 && errno == EINTR);
		return rc < 0 ? errno : 0;
	case MECH_SEM:
		do {
			rc = sem_wait(&ch->sem);
			*t_after_ns = clock_now_ns(ch->clock);
		} while (rc && errno == EINTR);
		return rc ? errno : 0;
	case MECH_SYSVSEM:
		do {
			rc = semop(ch->semid, &down, 1);
			*t_after_ns = clock_now_ns(ch->clock);
		} while (rc && errno == EINTR);
		return rc ? errno : 0;
	case MECH_COUNT:
		break;
	}
	return EINVAL;
}
