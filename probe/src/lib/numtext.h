/* SPDX-License-Identifier: MIT */
/*
 * numtext.h - small number parsers that keep the C library's scanf and
 * strtod out of the static board binaries.
 *
 * musl's sscanf/fscanf and strtod bring its whole floating-point scanner
 * (hex floats, exponents, long double arithmetic): 10-15 KiB of a probe that
 * must stay under 200 KiB, for reading a few integers from /proc and the
 * plain decimal numbers option values allow.
 */
#ifndef RTP_NUMTEXT_H
#define RTP_NUMTEXT_H

#include <stdbool.h>

/*
 * The decimal integer at the start of text, as strtoll(text, &end, 10):
 * blanks (isspace) skipped, an optional sign, the digits.  Returns the end
 * (text itself when there is no digit, *out then 0); out of range, *out is
 * LLONG_MAX or LLONG_MIN and *range true (strtoll's ERANGE), else false.
 */
const char *numtext_ll(const char *text, long long *out, bool *range);

/*
 * The integer at the start of text after blanks (as sscanf's "%lld"):
 * true and *out set when at least one digit is there.
 */
bool numtext_leading_ll(const char *text, long long *out);

/*
 * The value of text, which must be -?DIGITS[.DIGITS] (the caller checks the
 * form).  Correctly rounded, as strtod, when the digits without leading and
 * trailing zeros number at most 15 and the point moves them at most 22
 * places; longer inputs may differ from strtod in the last bit.
 */
double numtext_decimal(const char *text);

#endif /* RTP_NUMTEXT_H */
