// SPDX-License-Identifier: MIT
/*
 * inaddr.c - numeric IPv4 and IPv6 address parsing (see inaddr.h).
 */
#include "inaddr.h"

#include <string.h>

/* Whether c is a decimal digit. */
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The value of hex digit c, or -1. */
static int hex_value(char c)
{
	if (is_digit(c))
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

bool inaddr_parse4(const char *text, unsigned char out[4])
{
	unsigned int v;
	int part, n;

	for (part = 0; part < 4; part++) {
		if (part && *text++ != '.')
			return false;
		if (!is_digit(*text) || (*text == '0' && is_digit(text[1])))
			return false;
		for (v = 0, n = 0; n < 3 && is_digit(*text); n++)
			v = v * 10 + (unsigned int)(*text++ - '0');
		if (v > 255)
			return false;
		out[part] = (unsigned char)v;
	}
	return *text == '\0';
}

bool inaddr_parse6(const char *text, unsigned char out[16])
{
	unsigned char words[16];
	const char *group;
	int n = 0, gap = -1, len, d;
	unsigned int v;

	/* A leading colon is only allowed as the start of "::". */
	if (*text == ':') {
		if (text[1] != ':')
			return false;
		gap = 0;
		text += 2;
	}
	while (*text) {
		if (n == 16)
			return false;
		group = text;
		for (v = 0, len = 0; len < 4 && (d = hex_value(*text)) >= 0;
		     len++, text++)
			v = v * 16 + (unsigned int)d;
		if (!len)
			return false;
		if (*text == '.') {
			/* a dotted quad: the last two groups */
			if (n > 12 || !inaddr_parse4(group, words + n))
				return false;
			n += 4;
			break;
		}
		words[n++] = (unsigned char)(v >> 8);
		words[n++] = (unsigned char)v;
		if (!*text)
			break;
		if (*text++ != ':' || !*text)
			return false;
		if (*text == ':') {
			if (gap >= 0)
				return false;
			gap = n;
			text++;
		}
	}
	if (gap < 0 ? n != 16 : n > 14)
		return false;
	if (gap < 0)
		gap = n;
	memcpy(out, words, (size_t)gap);
	memset(out + gap, 0, (size_t)(16 - n));
	memcpy(out + gap + 16 - n, words + gap, (size_t)(n - gap));
	return true;
}
