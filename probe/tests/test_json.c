// SPDX-License-Identifier: MIT
/*
 * test_json.c - the NDJSON builder: RFC 8259 escaping, UTF-8 handling,
 * numbers, no NaN/Infinity, nesting and commas, one line per record.
 */
#include <math.h>
#include <stdlib.h>

#include "json.h"
#include "tap.h"

/* Escape n bytes and compare with the expected body. */
static void check_escape(struct tap *t, const char *in, size_t n,
			 const char *want, const char *name)
{
	char out[256];
	size_t len = json_escape(in, n, out, sizeof(out));

	tap_is_str(t, out, want, name);
	if (len != strlen(want))
		tap_diag("length %zu, want %zu", len, strlen(want));
}

/* Escaping of specials, control characters and UTF-8. */
static void test_escape(struct tap *t)
{
	char small[4];
	size_t need;

	check_escape(t, "a\"b\\c", 5, "a\\\"b\\\\c", "quote and backslash");
	check_escape(t, "/", 1, "/", "slash left alone");
	check_escape(t, "\n\t\r\b\f", 5, "\\n\\t\\r\\b\\f", "named controls");
	check_escape(t, "\x01\x1f\x7f", 3, "\\u0001\\u001f\\u007f",
		     "other controls as \\u00XX");
	check_escape(t, "a\0b", 3, "a\\u0000b", "NUL byte inside strn");
	check_escape(t, "5 \xc2\xb5s \xe2\x9c\x93 \xf0\x9f\x98\x80", 14,
		     "5 \xc2\xb5s \xe2\x9c\x93 \xf0\x9f\x98\x80",
		     "valid UTF-8 passes through");
	check_escape(t, "a\xff" "b", 3, "a\xef\xbf\xbd" "b",
		     "invalid byte becomes U+FFFD");
	check_escape(t, "\xe2\x82", 2, "\xef\xbf\xbd\xef\xbf\xbd",
		     "truncated sequence: one U+FFFD per byte");
	check_escape(t, "\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd",
		     "overlong encoding refused");
	check_escape(t, "\xed\xa0\x80", 3,
		     "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
		     "UTF-16 surrogate refused");
	check_escape(t, "\xf4\x90\x80\x80", 4,
		     "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
		     "code point above U+10FFFF refused");
	need = json_escape("\"\"\"", 3, small, sizeof(small));
	tap_ok(t, need == 6 && strlen(small) == 3,
	       "short buffer: full length returned, output truncated");
}

/* Build one record with f and compare the emitted line. */
static void check_record(struct tap *t, void (*f)(struct json *),
			 const char *want, const char *name)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	struct json j;
	int rc;

	if (!mem) {
		tap_ok(t, false, "open_memstream for %s", name);
		return;
	}
	json_init(&j);
	f(&j);
	rc = json_emit(&j, mem);
	fclose(mem);
	tap_ok(t, rc == 0 && buf && !strcmp(buf, want), "%s", name);
	if (!buf || strcmp(buf, want))
		tap_diag("got  %s\n# want %s", buf ? buf : "(null)", want);
	json_free(&j);
	free(buf);
}

/* Nested objects and arrays with commas in the right places. */
static void build_nested(struct json *j)
{
	json_begin_object(j, NULL);
	json_str(j, "type", "window");
	json_u64(j, "n", 1);
	json_begin_array(j, "hist");
	json_begin_array(j, NULL);
	json_u64(j, NULL, 506);
	json_u64(j, NULL, 3);
	json_end_array(j);
	json_begin_array(j, NULL);
	json_end_array(j);
	json_begin_object(j, NULL);
	json_null(j, "c");
	json_end_object(j);
	json_end_array(j);
	json_begin_object(j, "empty");
	json_end_object(j);
	json_bool(j, "t", true);
	json_bool(j, "f", false);
	json_str(j, "s", NULL);
	json_end_object(j);
}

/* Integers exact at the limits; doubles round-trip; NaN/inf as null. */
static void build_numbers(struct json *j)
{
	json_begin_object(j, NULL);
	json_u64(j, "umax", UINT64_MAX);
	json_i64(j, "imin", INT64_MIN);
	json_i64(j, "neg", -5);
	json_double(j, "tenth", 0.1);
	json_double(j, "half", 0.5);
	json_double(j, "nan", NAN);
	json_double(j, "inf", INFINITY);
	json_double(j, "ninf", -INFINITY);
	json_end_object(j);
}

/* Keys are escaped like values. */
static void build_escaped_key(struct json *j)
{
	json_begin_object(j, NULL);
	json_str(j, "k\"ey\n", "v\x01");
	json_strn(j, "part", "abcdef", 3);
	json_end_object(j);
}

/* A top-level array of values. */
static void build_array(struct json *j)
{
	json_begin_array(j, NULL);
	json_str(j, NULL, "a");
	json_i64(j, NULL, 2);
	json_null(j, NULL);
	json_end_array(j);
}

/* Unbalanced nesting is refused at emit. */
static void test_unbalanced(struct tap *t)
{
	FILE *null_out = fopen("/dev/null", "w");
	struct json j;

	if (!null_out) {
		tap_ok(t, false, "open /dev/null");
		return;
	}
	json_init(&j);
	json_begin_object(&j, NULL);
	tap_ok(t, json_emit(&j, null_out) == -1,
	       "unclosed object is refused at emit");
	json_begin_array(&j, NULL);
	json_end_array(&j);
	tap_ok(t, json_emit(&j, null_out) == 0,
	       "builder is usable again after a refused emit");
	json_free(&j);
	fclose(null_out);
}

/* Two records in a row: each one line, builder reset between them. */
static void test_two_records(struct tap *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	struct json j;

	if (!mem) {
		tap_ok(t, false, "open_memstream");
		return;
	}
	json_init(&j);
	json_begin_object(&j, NULL);
	json_u64(&j, "a", 1);
	json_end_object(&j);
	json_emit(&j, mem);
	json_begin_object(&j, NULL);
	json_u64(&j, "b", 2);
	json_end_object(&j);
	json_emit(&j, mem);
	fclose(mem);
	tap_is_str(t, buf, "{\"a\":1}\n{\"b\":2}\n",
		   "two records, two lines, no leftover comma");
	json_free(&j);
	free(buf);
}

/* A record larger than the initial buffer grows correctly. */
static void build_large(struct json *j)
{
	int i;

	json_begin_array(j, NULL);
	for (i = 0; i < 3000; i++)
		json_u64(j, NULL, 7);
	json_end_array(j);
}

int main(void)
{
	struct tap t = { 0, 0 };
	char *want;
	size_t i;

	test_escape(&t);
	check_record(&t, build_nested,
		     "{\"type\":\"window\",\"n\":1,\"hist\":[[506,3],[],"
		     "{\"c\":null}],\"empty\":{},\"t\":true,\"f\":false,"
		     "\"s\":null}\n", "nested objects, arrays and commas");
	check_record(&t, build_numbers,
		     "{\"umax\":18446744073709551615,"
		     "\"imin\":-9223372036854775808,\"neg\":-5,"
		     "\"tenth\":0.10000000000000001,\"half\":0.5,"
		     "\"nan\":null,\"inf\":null,\"ninf\":null}\n",
		     "exact integers, %.17g doubles, NaN/inf as null");
	check_record(&t, build_escaped_key,
		     "{\"k\\\"ey\\n\":\"v\\u0001\",\"part\":\"abc\"}\n",
		     "keys escaped; strn takes n bytes");
	check_record(&t, build_array, "[\"a\",2,null]\n", "top-level array");
	want = malloc(2 * 3000 + 3);
	if (want) {
		/* "[7" then ",7" 2999 times, then "]\n" */
		strcpy(want, "[7");
		for (i = 1; i < 3000; i++)
			memcpy(want + 2 * i, ",7", 2);
		strcpy(want + 2 * 3000, "]\n");
		check_record(&t, build_large, want, "large record grows buffer");
		free(want);
	}
	test_unbalanced(&t);
	test_two_records(&t);
	return tap_done(&t);
}
