// SPDX-License-Identifier: MIT
/*
 * tracefs.c - find, save, change and restore tracefs (see tracefs.h).
 */
#include "tracefs.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdio.h"
#include "fmt.h"
#include "numtext.h"

#define TRACEFS_STATE_NAME "rtprobe-trace.state"

static const char *const tracefs_dirs[] = { "/sys/kernel/tracing",
					    "/sys/kernel/debug/tracing" };

int tracefs_find(char *dir, size_t len, bool may_mount, bool *mounted,
		 char *why, size_t wlen)
{
	char path[96];
	size_t i;

	*mounted = false;
	for (i = 0; i < sizeof(tracefs_dirs) / sizeof(tracefs_dirs[0]); i++) {
		fmt_snprintf(path, sizeof(path), "%s/tracing_on",
			     tracefs_dirs[i]);
		if (access(path, F_OK) == 0) {
			fmt_snprintf(dir, len, "%s", tracefs_dirs[i]);
			return 0;
		}
	}
	if (!may_mount) {
		fmt_snprintf(why, wlen, "tracefs not found in /sys/kernel");
		return -1;
	}
	if (mount("nodev", tracefs_dirs[0], "tracefs", 0, NULL)) {
		fmt_snprintf(why, wlen, "cannot mount tracefs on %s: %s",
			     tracefs_dirs[0], strerror(errno));
		return -1;
	}
	fmt_snprintf(dir, len, "%s", tracefs_dirs[0]);
	*mounted = true;
	return 0;
}

/* Open dir/rel (rel alone when dir is ""); the fd, or -1 (errno). */
static int tracefs_open(const char *dir, const char *rel, int flags)
{
	char path[256];

	fmt_snprintf(path, sizeof(path), "%s%s%s", dir, *dir ? "/" : "", rel);
	return open(path, flags | O_CLOEXEC);
}

int tracefs_read(const char *dir, const char *rel, char *buf, size_t len)
{
	ssize_t n;
	int fd, err;

	fd = tracefs_open(dir, rel, O_RDONLY);
	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, len - 1);
	while (n < 0 && errno == EINTR);
	err = errno;
	close(fd);
	if (n < 0) {
		errno = err;
		return -1;
	}
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int tracefs_write(const char *dir, const char *rel, const char *value)
{
	int fd, rc, err;

	fd = tracefs_open(dir, rel, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -1;
	rc = fdio_write_full(fd, value, strlen(value));
	err = errno;
	if (close(fd) && !rc) {
		rc = -1;
		err = errno;
	}
	errno = err;
	return rc;
}

void tracefs_clock_selected(const char *text, char *out, size_t len)
{
	const char *a = strchr(text, '['), *b = a ? strchr(a, ']') : NULL;

	if (!a || !b) {
		fmt_snprintf(out, len, "%s", "");
		return;
	}
	fmt_snprintf(out, len, "%.*s", (int)(b - a - 1), a + 1);
}

bool tracefs_clock_offered(const char *text, const char *word)
{
	size_t n = strlen(word);
	const char *p = text;

	while ((p = strstr(p, word))) {
		bool left = p == text || p[-1] == ' ' || p[-1] == '[';
		bool right = p[n] == '\0' || p[n] == ' ' || p[n] == ']' ||
			     p[n] == '\n';

		if (left && right)
			return true;
		p += n;
	}
	return false;
}

void tracefs_state_path(char *buf, size_t len)
{
	const char *dir = getenv("RTPROBE_STATE_DIR");

	if (!dir || !*dir) {
		if (access("/run", W_OK) == 0)
			dir = "/run";
		else
			dir = getenv("TMPDIR");
	}
	if (!dir || !*dir)
		dir = "/tmp";
	fmt_snprintf(buf, len, "%s/%s", dir, TRACEFS_STATE_NAME);
}

/* The text fields of the state file: key, place and size in the state. */
struct st_field {
	const char *key;
	unsigned short off, len;
};

#define ST_FIELD(key, member)                                     \
	{ key, offsetof(struct tracefs_state, member),            \
	  sizeof(((struct tracefs_state *)0)->member) }

static const struct st_field st_fields[] = {
	ST_FIELD("dir", dir),
	ST_FIELD("tracing_on", tracing_on),
	ST_FIELD("buffer_size_kb", buffer_kb),
	ST_FIELD("trace_clock", clock),
	ST_FIELD("current_tracer", tracer),
};

#define ST_NFIELDS (sizeof(st_fields) / sizeof(st_fields[0]))

/* Append "key value\n" to buf at *n (bounded). */
static void st_line(char *buf, size_t cap, size_t *n, const char *key,
		    const char *value)
{
	int k;

	if (*n >= cap)
		return;
	k = fmt_snprintf(buf + *n, cap - *n, "%s %s\n", key, value);
	if (k > 0)
		*n += (size_t)k;
}

int tracefs_state_save(const struct tracefs_state *st, char *why,
		       size_t wlen)
{
	char path[256], tmp[272], *buf;
	size_t cap = 1024 + TRACEFS_MAX_EVENTS * (TRACEFS_NAME + 8), n, i;
	int fd, rc;

	buf = malloc(cap);
	if (!buf) {
		fmt_snprintf(why, wlen, "out of memory");
		return -1;
	}
	n = (size_t)fmt_snprintf(buf, cap, "rtprobe-trace-state 1\npid %d\n"
				 "mounted %d\n", st->pid, st->mounted);
	for (i = 0; i < ST_NFIELDS; i++)
		st_line(buf, cap, &n, st_fields[i].key,
			(const char *)st + st_fields[i].off);
	for (i = 0; i < (size_t)st->nevents; i++)
		st_line(buf, cap, &n, "event", st->events[i]);
	tracefs_state_path(path, sizeof(path));
	fmt_snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, st->pid);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0) {
		fmt_snprintf(why, wlen, "cannot create %s: %s (set "
			     "RTPROBE_STATE_DIR)", tmp, strerror(errno));
		free(buf);
		return -1;
	}
	rc = fdio_write_full(fd, buf, n);
	if (!rc)
		rc = fsync(fd);
	if (close(fd))
		rc = -1;
	free(buf);
	if (!rc)
		rc = rename(tmp, path);
	if (rc) {
		fmt_snprintf(why, wlen, "cannot write %s: %s", path,
			     strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* True when the klen bytes at key are the key name. */
static bool st_key(const char *key, size_t klen, const char *name)
{
	return strlen(name) == klen && !memcmp(key, name, klen);
}

int tracefs_state_parse(const char *text, struct tracefs_state *st)
{
	const char *p = text, *nl, *sp;
	char val[TRACEFS_NAME], *out;
	long long num;
	bool magic = false;
	size_t len, klen, olen, i;

	memset(st, 0, sizeof(*st));
	while (*p) {
		nl = strchr(p, '\n');
		len = nl ? (size_t)(nl - p) : strlen(p);
		sp = memchr(p, ' ', len);
		klen = sp ? (size_t)(sp - p) : 0;
		out = val;
		olen = sizeof(val);
		for (i = 0; sp && i < ST_NFIELDS; i++) {
			if (st_key(p, klen, st_fields[i].key)) {
				out = (char *)st + st_fields[i].off;
				olen = st_fields[i].len;
			}
		}
		if (sp)
			fmt_snprintf(out, olen, "%.*s", (int)(len - klen - 1),
				     sp + 1);
		if (!sp || out != val)
			;
		else if (st_key(p, klen, "rtprobe-trace-state"))
			magic = !strcmp(val, "1");
		else if (st_key(p, klen, "pid") &&
			 numtext_leading_ll(val, &num))
			st->pid = (int)num;
		else if (st_key(p, klen, "mounted"))
			st->mounted = !strcmp(val, "1");
		else if (st_key(p, klen, "event") &&
			 st->nevents < TRACEFS_MAX_EVENTS && !strstr(val, ".."))
			fmt_snprintf(st->events[st->nevents++], TRACEFS_NAME,
				     "%s", val);
		if (!nl)
			break;
		p = nl + 1;
	}
	if (!magic || st->pid <= 0 || strncmp(st->dir, "/sys/", 5))
		return -1;
	return 0;
}

int tracefs_state_load(struct tracefs_state *st, char *why, size_t wlen)
{
	char path[256], *text;
	size_t len;

	tracefs_state_path(path, sizeof(path));
	if (access(path, F_OK))
		return 0;
	text = tracefs_slurp("", path, &len);
	if (!text) {
		fmt_snprintf(why, wlen, "cannot read %s: %s", path,
			     strerror(errno));
		return -1;
	}
	if (tracefs_state_parse(text, st)) {
		free(text);
		fmt_snprintf(why, wlen, "%s is not rtprobe's: remove it",
			     path);
		return -1;
	}
	free(text);
	return 1;
}

/* Note the first failure of a restore step in why. */
static void st_fail(int *rc, char *why, size_t wlen, const char *what)
{
	if (*rc)
		return;
	*rc = -1;
	fmt_snprintf(why, wlen, "restoring tracefs %s: %s", what,
		     strerror(errno));
}

uint64_t tracefs_kb(const char *text)
{
	const char *exp = strstr(text, "expanded: ");
	long long v;

	if (!numtext_leading_ll(exp ? exp + 10 : text, &v) || v < 0)
		return 0;
	return (uint64_t)v;
}

int tracefs_restore(const struct tracefs_state *st, char *why, size_t wlen)
{
	char rel[TRACEFS_NAME + 16], now[64], path[256], kb[24];
	int i, rc = 0;

	for (i = 0; i < st->nevents; i++) {
		fmt_snprintf(rel, sizeof(rel), "events/%s/enable",
			     st->events[i]);
		if (tracefs_write(st->dir, rel, "0"))
			st_fail(&rc, why, wlen, rel);
	}
	if (st->clock[0] && tracefs_write(st->dir, "trace_clock", st->clock))
		st_fail(&rc, why, wlen, "trace_clock");
	if (tracefs_kb(st->buffer_kb) &&
	    (tracefs_read(st->dir, "buffer_size_kb", now, sizeof(now)) ||
	     tracefs_kb(now) != tracefs_kb(st->buffer_kb))) {
		fmt_snprintf(kb, sizeof(kb), "%llu",
			     (unsigned long long)tracefs_kb(st->buffer_kb));
		if (tracefs_write(st->dir, "buffer_size_kb", kb))
			st_fail(&rc, why, wlen, "buffer_size_kb");
	}
	if (st->tracer[0] &&
	    !tracefs_read(st->dir, "current_tracer", now, sizeof(now)) &&
	    strcmp(now, st->tracer) &&
	    tracefs_write(st->dir, "current_tracer", st->tracer))
		st_fail(&rc, why, wlen, "current_tracer");
	if (st->tracing_on[0] &&
	    tracefs_write(st->dir, "tracing_on", st->tracing_on))
		st_fail(&rc, why, wlen, "tracing_on");
	/*
	 * Every tracefs fd of this process is closed by now; one another
	 * process holds keeps the mount busy: detach it (lazy unmount), the
	 * kernel drops it when that fd closes.
	 */
	if (st->mounted && umount(st->dir) &&
	    (errno != EBUSY || umount2(st->dir, MNT_DETACH)))
		st_fail(&rc, why, wlen, "mount");
	tracefs_state_path(path, sizeof(path));
	if (unlink(path) && errno != ENOENT)
		st_fail(&rc, why, wlen, "state file");
	return rc;
}

char *tracefs_slurp(const char *dir, const char *rel, size_t *len)
{
	char *buf = NULL, *nb;
	size_t cap = 0, n = 0;
	ssize_t k;
	int fd, err;

	fd = tracefs_open(dir, rel, O_RDONLY);
	if (fd < 0)
		return NULL;
	for (;;) {
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				err = ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		k = read(fd, buf + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			err = errno;
			goto fail;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	close(fd);
	free(buf);
	errno = err;
	return NULL;
}
