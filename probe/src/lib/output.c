// SPDX-License-Identifier: MIT
/*
 * output.c - atomic record files and the record envelope (see output.h).
 */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fmt.h"
#include "json.h"
#include "rtprobe.h"

/* The mode a new file gets under the current umask (0666 & ~umask). */
static mode_t output_mode(void)
{
	mode_t mask = umask(0);

	umask(mask);
	return 0666 & ~mask;
}

/*
 * Whether path names something that is not a regular file (a device such as
 * /dev/null, a FIFO, a socket): it is written in place, never replaced by a
 * renamed temporary file (which would turn /dev/null into a plain file).
 */
static bool output_is_special(const char *path)
{
	struct stat st;

	return !stat(path, &st) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

/* Open a device or FIFO for writing in place; 0 or an exit code with a line. */
static int output_open_special(struct output *o)
{
	int fd = open(o->path, O_WRONLY | O_CLOEXEC | O_NOCTTY);

	if (fd >= 0)
		o->f = fdopen(fd, "w");
	if (fd < 0 || !o->f) {
		fmt_fprintf(stderr, "rtprobe: %s %s: %s\n", o->option, o->path,
			    strerror(errno));
		if (fd >= 0)
			close(fd);
		return RTP_EXIT_ENV;
	}
	return 0;
}

int output_open(struct output *o, const char *option, const char *path)
{
	size_t len;
	int fd;

	memset(o, 0, sizeof(*o));
	o->option = option;
	o->path = path;
	if (!path) {
		o->f = stdout;
		return 0;
	}
	if (output_is_special(path))
		return output_open_special(o);
	len = strlen(path) + 8;
	o->tmp_path = malloc(len);
	if (!o->tmp_path) {
		fmt_fprintf(stderr, "rtprobe: %s %s: out of memory\n", option,
			    path);
		return RTP_EXIT_ENV;
	}
	fmt_snprintf(o->tmp_path, len, "%s.XXXXXX", path);
	fd = mkostemp(o->tmp_path, O_CLOEXEC);
	if (fd < 0) {
		fmt_fprintf(stderr, "rtprobe: %s %s: cannot create a file there "
			    "(%s); give a path in a writable directory\n", option,
			    path, strerror(errno));
		free(o->tmp_path);
		o->tmp_path = NULL;
		return RTP_EXIT_USAGE;
	}
	if (fchmod(fd, output_mode()))
		o->err = errno;
	o->f = fdopen(fd, "w");
	if (!o->f) {
		fmt_fprintf(stderr, "rtprobe: %s %s: %s\n", option, path,
			    strerror(errno));
		close(fd);
		unlink(o->tmp_path);
		free(o->tmp_path);
		o->tmp_path = NULL;
		return RTP_EXIT_ENV;
	}
	return 0;
}

bool output_write(struct output *o, const void *buf, size_t n)
{
	if (o->discard)
		return true;
	if (o->err)
		return false;
	if (n && fwrite(buf, 1, n, o->f) != n) {
		o->err = errno ? errno : EIO;
		return false;
	}
	return true;
}

bool output_emit(struct output *o, struct json *j)
{
	if (o->discard) {
		json_reset(j);
		return true;
	}
	if (o->err) {
		json_reset(j);
		return false;
	}
	errno = 0;
	if (json_emit(j, o->f)) {
		o->err = errno ? errno : EIO;
		return false;
	}
	return true;
}

bool output_failed(const struct output *o)
{
	return o->err != 0;
}

const char *output_name(const struct output *o)
{
	return o->path ? o->path : "stdout";
}

/* Print the one line of a failed output. */
static int output_report(const struct output *o, int err)
{
	if (o->path)
		fmt_fprintf(stderr, "rtprobe: %s %s: cannot write it (%s); the "
			    "file was left as it was\n", o->option, o->path,
			    strerror(err));
	else
		fmt_fprintf(stderr, "rtprobe: cannot write the records to stdout "
			    "(%s)\n", strerror(err));
	return RTP_EXIT_ENV;
}

int output_close(struct output *o)
{
	int err = o->err;

	if (o->closed)
		return 0;
	o->closed = true;
	if (!o->path) {
		errno = 0;
		if ((fflush(stdout) || ferror(stdout)) && !err)
			err = errno ? errno : EIO;
		return err ? output_report(o, err) : 0;
	}
	errno = 0;
	if (fflush(o->f) && !err)
		err = errno ? errno : EIO;
	if (!o->tmp_path) {  /* a device or FIFO written in place */
		if (fclose(o->f) && !err)
			err = errno ? errno : EIO;
		o->f = NULL;
		return err ? output_report(o, err) : 0;
	}
	if (!err && fsync(fileno(o->f)))
		err = errno;
	if (fclose(o->f) && !err)
		err = errno ? errno : EIO;
	o->f = NULL;
	if (!err && rename(o->tmp_path, o->path))
		err = errno;
	if (err)
		unlink(o->tmp_path);
	free(o->tmp_path);
	o->tmp_path = NULL;
	return err ? output_report(o, err) : 0;
}

bool output_is_terminal(const char *path, bool json)
{
	if (path || json || !isatty(STDOUT_FILENO))
		return false;
	fmt_fprintf(stderr, "rtprobe: stdout is a terminal: the NDJSON records are "
		    "not shown (give --output FILE, a pipe or --json); a summary "
		    "follows at the end\n");
	return true;
}

void output_discard(struct output *o)
{
	if (o->closed)
		return;
	o->closed = true;
	if (!o->path) {
		fflush(stdout);
		return;
	}
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp_path)
		unlink(o->tmp_path);
	free(o->tmp_path);
	o->tmp_path = NULL;
}

void record_begin(struct json *j, const char *type)
{
	json_begin_object(j, NULL);
	json_str(j, "schema", RTPROBE_SCHEMA);
	json_str(j, "type", type);
}

void record_start_header(struct json *j, const char *test, bool simulated,
			 const char *simulate, int argc, char **argv)
{
	int i;

	json_str(j, "tool", "rtprobe");
	json_str(j, "version", RTPROBE_VERSION);
	json_str(j, "test", test);
	json_bool(j, "simulated", simulated);
	json_str(j, "simulate", simulate);
	json_begin_array(j, "argv");
	json_str(j, NULL, "rtprobe");
	for (i = 0; i < argc; i++)
		json_str(j, NULL, argv[i]);
	json_end_array(j);
}
