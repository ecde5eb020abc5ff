/* SPDX-License-Identifier: MIT */
/*
 * output.h - where records (and raw samples) go, written one way, and the
 * envelope every record starts with.
 *
 * A device or FIFO (/dev/null, a named pipe) is written in place.  A regular
 * file (--output FILE, --raw FILE) is written under a temporary name in
 * the same directory, made with mkostemp(O_CLOEXEC) (unpredictable, never
 * follows a planted symlink, not inherited by forked workers or --on-spike
 * commands), with the permissions the umask allows for a new file.
 * output_close() flushes, fsyncs and renames it onto FILE.  After any write
 * error (a full disk, an I/O error) the temporary file is removed and FILE
 * is left as it was; output_close() then prints one line naming FILE and
 * the error and returns exit code 3.  Without a path the stream is stdout:
 * a write error there (full, closed pipe) is the same one line and exit 3.
 *
 * The first error is kept (o->err); later writes are skipped, so the
 * caller may stop early (output_failed()) or just carry on.
 */
#ifndef RTP_OUTPUT_H
#define RTP_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct json;

struct output {
	const char *option;   /* "--output", "--raw": named in messages */
	const char *path;     /* NULL: stdout */
	FILE *f;
	char *tmp_path;       /* temporary file until output_close() */
	int err;              /* first errno of a failed write; 0: none */
	bool discard;         /* write nothing (a terminal, output_is_terminal) */
	bool closed;
};

/*
 * Open path (NULL: stdout) for option.  0, or an exit code with one line
 * printed: 2 when the path cannot be created (the user's to fix), 3 when
 * memory or the stream fails.
 */
int output_open(struct output *o, const char *option, const char *path);

/* Write n bytes; false once any write failed (the first error is kept). */
bool output_write(struct output *o, const void *buf, size_t n);

/* Write a finished JSON record as one line; false once any write failed. */
bool output_emit(struct output *o, struct json *j);

/* True once a write failed. */
bool output_failed(const struct output *o);

/* The file's name for messages ("stdout" without a path). */
const char *output_name(const struct output *o);

/*
 * Finish: flush, fsync and rename a file (or flush stdout).  0, or 3 with
 * one line printed when anything failed; FILE is then left as it was.
 */
int output_close(struct output *o);

/*
 * Whether the records would go to a terminal: no path, stdout a TTY and no
 * --json (json).  NDJSON is for pipes and files, so the caller then writes
 * none and prints a summary on stderr at the end; this says so, once.
 */
bool output_is_terminal(const char *path, bool json);

/* Give up (a run that never started): remove the temporary file. */
void output_discard(struct output *o);

/*
 * The record envelope: open a record object and write the members every
 * rtprobe/1 record starts with, "schema" and "type".
 */
void record_begin(struct json *j, const char *type);

/*
 * The members a start record of test begins with (after record_begin):
 * tool, version, test, simulated, simulate, argv ("rtprobe" + argv[0..argc)).
 */
void record_start_header(struct json *j, const char *test, bool simulated,
			 const char *simulate, int argc, char **argv);

#endif /* RTP_OUTPUT_H */
