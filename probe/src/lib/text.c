// SPDX-License-Identifier: MIT
/*
 * text.c - unpack help texts (see text.h).
 */
#include "text.h"
#include "text_pairs.h"

const unsigned char *text_pair(unsigned char byte)
{
	return byte >= 0x80 && byte - 0x80 < TEXT_PAIRS ? text_pairs[byte - 0x80] : NULL;
}

/* Write what byte stands for at out[n] on (as far as size allows); the new n. */
static size_t text_expand(unsigned char byte, char *out, size_t n, size_t size)
{
	const unsigned char *pair = text_pair(byte);

	if (!pair) {
		if (n + 1 < size)
			out[n] = (char)byte;
		return n + 1;
	}
	n = text_expand(pair[0], out, n, size);
	return text_expand(pair[1], out, n, size);
}

const char *text_get(const char *text, char *buf, size_t size)
{
	const unsigned char *p;
	size_t n = 0;

	if (!TEXT_PAIRS || !text || !size)
		return text;
	for (p = (const unsigned char *)text; *p; p++)
		n = text_expand(*p, buf, n, size);
	buf[n < size ? n : size - 1] = '\0';
	return buf;
}
