// SPDX-License-Identifier: MIT
/*
 * text.c - unpack help texts (see text.h).
 */
#include "text.h"
#include "help.h"

static const unsigned char text_pairs[][2] = HELP_PAIRS;

/* Write what byte stands for at out[n] on (as far as size allows); the new n. */
static size_t text_expand(unsigned char byte, char *out, size_t n, size_t size)
{
	if (byte < 0x80 || byte - 0x80 >= HELP_PAIR_COUNT) {
		if (n + 1 < size)
			out[n] = (char)byte;
		return n + 1;
	}
	n = text_expand(text_pairs[byte - 0x80][0], out, n, size);
	return text_expand(text_pairs[byte - 0x80][1], out, n, size);
}

const char *text_get(const char *text, char *buf, size_t size)
{
	const unsigned char *p;
	size_t n = 0;

	if (!HELP_PAIR_COUNT || !text || !size)
		return text;
	for (p = (const unsigned char *)text; *p; p++)
		n = text_expand(*p, buf, n, size);
	buf[n < size ? n : size - 1] = '\0';
	return buf;
}
