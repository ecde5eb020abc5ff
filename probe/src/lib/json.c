// SPDX-License-Identifier: MIT
/*
 * json.c - a small NDJSON record builder (see json.h).
 */
#include "fmt.h"
#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Make room for extra more bytes; sets failed on allocation failure. */
static bool json_reserve(struct json *j, size_t extra)
{
	size_t want, cap;
	char *nbuf;

	if (j->failed)
		return false;
	if (j->len + extra + 2 <= j->cap)	/* +2: '\n' and '\0' */
		return true;
	want = j->len + extra + 2;
	cap = j->cap ? j->cap : 256;
	while (cap < want)
		cap *= 2;
	nbuf = realloc(j->buf, cap);
	if (!nbuf) {
		j->failed = true;
		return false;
	}
	j->buf = nbuf;
	j->cap = cap;
	return true;
}

/* Append n raw bytes. */
static void json_put(struct json *j, const char *s, size_t n)
{
	if (!json_reserve(j, n))
		return;
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = '\0';
}

/*
 * Write the decimal digits of value at out (room for 20), return the end.
 * Written by hand because snprintf was most of the cost of a window record
 * (one pair per histogram bucket).
 */
static char *json_digits(char *out, uint64_t value)
{
	uint64_t rest = value;
	char *end = out + 1;

	while (rest >= 10) {	/* count the digits, then fill from the right */
		rest /= 10;
		end++;
	}
	out = end;
	do {
		*--out = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	return end;
}

/* Append the decimal digits of value. */
static void json_put_u64(struct json *j, uint64_t value)
{
	if (!json_reserve(j, 20))
		return;
	j->len = (size_t)(json_digits(j->buf + j->len, value) - j->buf);
	j->buf[j->len] = '\0';
}

/* Append a NUL-terminated raw string. */
static void json_puts(struct json *j, const char *s)
{
	json_put(j, s, strlen(s));
}

/*
 * Length of the valid UTF-8 sequence starting at s (at most n bytes), or 0
 * when it is invalid: bad lead byte, missing continuation, overlong form,
 * a surrogate (U+D800..DFFF) or a code point above U+10FFFF.
 */
static size_t utf8_valid_len(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF) {
		len = 2;
		cp = s[0] & 0x1F;
	} else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		len = 3;
		cp = s[0] & 0x0F;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
		return 0;
	return len;
}

/*
 * Escape value (n bytes) as a JSON string body into out; returns the length
 * the escaped text needs (like snprintf), writing at most outlen - 1 bytes
 * plus a NUL when outlen > 0.
 */
size_t json_escape(const char *value, size_t n, char *out, size_t outlen)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)value;
	char tmp[8];
	size_t i = 0, len = 0, piece, k, vlen;
	const char *src;

	while (i < n) {
		unsigned char c = s[i];

		src = tmp;
		vlen = 1;
		if (c == '"' || c == '\\') {
			tmp[0] = '\\';
			tmp[1] = (char)c;
			piece = 2;
		} else if (c < 0x20 || c == 0x7F) {
			const char *named = NULL;

			switch (c) {
			case '\b': named = "\\b"; break;
			case '\f': named = "\\f"; break;
			case '\n': named = "\\n"; break;
			case '\r': named = "\\r"; break;
			case '\t': named = "\\t"; break;
			}
			if (named) {
				memcpy(tmp, named, 2);
				piece = 2;
			} else {
				memcpy(tmp, "\\u00", 4);
				tmp[4] = hex[c >> 4];
				tmp[5] = hex[c & 15];
				piece = 6;
			}
		} else if (c < 0x80) {
			tmp[0] = (char)c;
			piece = 1;
		} else {
			vlen = utf8_valid_len(s + i, n - i);
			if (vlen) {
				src = value + i;
				piece = vlen;
			} else {
				/* One invalid byte becomes U+FFFD. */
				memcpy(tmp, "\xEF\xBF\xBD", 3);
				piece = 3;
				vlen = 1;
			}
		}
		for (k = 0; k < piece; k++, len++)
			if (outlen && len < outlen - 1)
				out[len] = src[k];
		i += vlen;
	}
	if (outlen)
		out[len < outlen ? len : outlen - 1] = '\0';
	return len;
}

/* Append value as a quoted, escaped JSON string. */
static void json_put_string(struct json *j, const char *value, size_t n)
{
	size_t need, i;

	/* Fast path: printable ASCII without quote or backslash (every key). */
	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)value[i];

		if (ch < 0x20 || ch >= 0x7f || ch == '"' || ch == '\\')
			break;
	}
	if (i == n) {
		json_put(j, "\"", 1);
		json_put(j, value, n);
		json_put(j, "\"", 1);
		return;
	}
	need = json_escape(value, n, NULL, 0);

	json_put(j, "\"", 1);
	if (!json_reserve(j, need + 1))
		return;
	json_escape(value, n, j->buf + j->len, need + 1);
	j->len += need;
	json_put(j, "\"", 1);
}

/* Write the comma and key (in an object) that precede every value. */
static void json_prefix(struct json *j, const char *key)
{
	if (j->depth > 0 && j->depth <= JSON_MAX_DEPTH) {
		if (j->need_comma[j->depth - 1])
			json_put(j, ",", 1);
		j->need_comma[j->depth - 1] = true;
	}
	if (key) {
		json_put_string(j, key, strlen(key));
		json_put(j, ":", 1);
	}
}

/* Prepare an empty builder. */
void json_init(struct json *j)
{
	memset(j, 0, sizeof(*j));
}

/* Release the buffer. */
void json_free(struct json *j)
{
	free(j->buf);
	json_init(j);
}

/* Drop what was built so far, keeping the buffer. */
void json_reset(struct json *j)
{
	j->len = 0;
	if (j->buf)
		j->buf[0] = '\0';
	j->depth = 0;
	j->failed = false;
	memset(j->need_comma, 0, sizeof(j->need_comma));
}

/* Open a container ('{' or '['), nesting at most JSON_MAX_DEPTH deep. */
static void json_open(struct json *j, const char *key, char bracket)
{
	json_prefix(j, key);
	json_put(j, &bracket, 1);
	if (j->depth >= JSON_MAX_DEPTH) {
		j->failed = true;	/* a programming error: reported at emit */
		return;
	}
	j->need_comma[j->depth] = false;
	j->depth++;
}

/* Close the innermost container with bracket. */
static void json_close(struct json *j, char bracket)
{
	json_put(j, &bracket, 1);
	if (j->depth > 0)
		j->depth--;
}

/* Open an object (key NULL at top level or inside an array). */
void json_begin_object(struct json *j, const char *key)
{
	json_open(j, key, '{');
}

/* Close the innermost object. */
void json_end_object(struct json *j)
{
	json_close(j, '}');
}

/* Open an array (key NULL at top level or inside an array). */
void json_begin_array(struct json *j, const char *key)
{
	json_open(j, key, '[');
}

/* Close the innermost array. */
void json_end_array(struct json *j)
{
	json_close(j, ']');
}

/* Write a string value; a NULL value is written as null. */
void json_str(struct json *j, const char *key, const char *value)
{
	if (!value) {
		json_null(j, key);
		return;
	}
	json_strn(j, key, value, strlen(value));
}

/* Write the first n bytes of value as a string. */
void json_strn(struct json *j, const char *key, const char *value, size_t n)
{
	json_prefix(j, key);
	json_put_string(j, value, n);
}

/* Write an unsigned 64-bit integer exactly. */
void json_u64(struct json *j, const char *key, uint64_t value)
{
	json_prefix(j, key);
	json_put_u64(j, value);
}

/* Write a signed 64-bit integer exactly. */
void json_i64(struct json *j, const char *key, int64_t value)
{
	json_prefix(j, key);
	if (value < 0) {
		json_put(j, "-", 1);
		/* Negate in unsigned arithmetic: exact for INT64_MIN too. */
		json_put_u64(j, 0 - (uint64_t)value);
	} else {
		json_put_u64(j, (uint64_t)value);
	}
}

void json_pair_u64(struct json *j, uint64_t first, uint64_t second)
{
	char *p;

	/* One reservation for ",[" 20 digits "," 20 digits "]". */
	if (!json_reserve(j, 44))
		return;
	p = j->buf + j->len;
	if (j->depth > 0 && j->depth <= JSON_MAX_DEPTH) {
		if (j->need_comma[j->depth - 1])
			*p++ = ',';
		j->need_comma[j->depth - 1] = true;
	}
	*p++ = '[';
	p = json_digits(p, first);
	*p++ = ',';
	p = json_digits(p, second);
	*p++ = ']';
	*p = '\0';
	j->len = (size_t)(p - j->buf);
}

/* Write a double with round-trip precision; NaN and infinities as null. */
void json_double(struct json *j, const char *key, double value)
{
	char num[32];

	if (!isfinite(value)) {
		json_null(j, key);
		return;
	}
	json_prefix(j, key);
	fmt_snprintf(num, sizeof(num), "%.17g", value);
	json_puts(j, num);
}

/* Write true or false. */
void json_bool(struct json *j, const char *key, bool value)
{
	json_prefix(j, key);
	json_puts(j, value ? "true" : "false");
}

/* Write null. */
void json_null(struct json *j, const char *key)
{
	json_prefix(j, key);
	json_puts(j, "null");
}

/*
 * Write the record plus '\n' with one fwrite and flush, then reset.
 * Returns 0, or -1 with errno set (ENOMEM when building failed, EINVAL for
 * unbalanced nesting).
 */
int json_emit(struct json *j, FILE *f)
{
	int rc = 0;

	if (j->failed || !j->buf) {
		errno = j->failed ? ENOMEM : EINVAL;
		json_reset(j);
		return -1;
	}
	if (j->depth != 0) {
		errno = EINVAL;
		json_reset(j);
		return -1;
	}
	j->buf[j->len] = '\n';
	if (fwrite(j->buf, 1, j->len + 1, f) != j->len + 1 || fflush(f))
		rc = -1;
	json_reset(j);
	return rc;
}
