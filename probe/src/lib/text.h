/* SPDX-License-Identifier: MIT */
/*
 * text.h - rtprobe's help texts as they are stored.
 *
 * The help texts of the options, tests and loads (`.help`, `.intro` and
 * `.examples` of the descriptors) are plain ASCII in the sources.  The board
 * builds of `rtbench probe build` store them packed (rtbench/probetext.py):
 * a byte from 0x80 up stands for a pair of bytes, each of which may be such
 * a code again.  Whatever prints one of these texts reads it through
 * text_get(), which gives back the plain text in either build.  The literal
 * parts of the format strings given to rtprobe's printf (fmt.h) are packed
 * the same way, and fmt.c unpacks them as it writes.
 */
#ifndef RTP_TEXT_H
#define RTP_TEXT_H

#include <stddef.h>

/* Room for the longest help text once unpacked (the packer checks it). */
#define TEXT_MAX 2048

/* The plain text: text itself when nothing in it is packed, else unpacked into buf. */
const char *text_get(const char *text, char *buf, size_t size);

/*
 * The two bytes a packed byte stands for (each may be a code again), or NULL
 * for a plain one.  fmt.c unpacks format strings with it: the board builds
 * pack the literal text of rtprobe's format strings too, never a conversion.
 */
const unsigned char *text_pair(unsigned char byte);

#endif /* RTP_TEXT_H */
