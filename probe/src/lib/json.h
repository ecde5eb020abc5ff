/* SPDX-License-Identifier: MIT */
/*
 * json.h - a small NDJSON record builder.
 *
 * A record is built in a growable buffer and written with one fwrite() plus a
 * newline and fflush(), so a reader never sees half a line from us.  Strings
 * are escaped per RFC 8259 (quote, backslash, control characters as \uXXXX;
 * invalid UTF-8 bytes are replaced by U+FFFD).  Doubles that are NaN or
 * infinite are written as null: the output never contains NaN/Infinity.
 *
 * Usage:
 *   struct json j;
 *   json_init(&j);
 *   json_begin_object(&j, NULL);
 *   json_str(&j, "type", "window");
 *   json_begin_array(&j, "hist");  ... json_end_array(&j);
 *   json_end_object(&j);
 *   json_emit(&j, out);           -- writes the line, resets the builder
 *   json_free(&j);
 *
 * Inside an object every value needs a key; inside an array key must be NULL.
 * The builder is not for hot loops: it may allocate.
 */
#ifndef RTP_JSON_H
#define RTP_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
	char *buf;
	size_t len;
	size_t cap;
	int depth;
	bool need_comma[JSON_MAX_DEPTH];
	bool failed; /* allocation failure: json_emit() reports it */
};

/* Prepare an empty builder. */
void json_init(struct json *j);
/* Release the buffer. */
void json_free(struct json *j);
/* Drop what was built so far. */
void json_reset(struct json *j);

void json_begin_object(struct json *j, const char *key);
void json_end_object(struct json *j);
void json_begin_array(struct json *j, const char *key);
void json_end_array(struct json *j);

/* Value writers; key is NULL inside arrays.  json_str(NULL value) writes null. */
void json_str(struct json *j, const char *key, const char *value);
void json_strn(struct json *j, const char *key, const char *value, size_t n);
void json_u64(struct json *j, const char *key, uint64_t value);
void json_i64(struct json *j, const char *key, int64_t value);
void json_double(struct json *j, const char *key, double value);
void json_bool(struct json *j, const char *key, bool value);
void json_null(struct json *j, const char *key);
/* Write the array element [first,second] (inside an array): histogram pairs. */
void json_pair_u64(struct json *j, uint64_t first, uint64_t second);

/* Append '\n', write the record to f, flush, reset.  Returns 0 or -1 (errno set). */
int json_emit(struct json *j, FILE *f);

/* Escape value into out as a JSON string body (no quotes); for tests. */
size_t json_escape(const char *value, size_t n, char *out, size_t outlen);

#endif /* RTP_JSON_H */
