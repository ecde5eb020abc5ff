/* SPDX-License-Identifier: MIT */
/*
 * text.h - rtprobe's help texts as they are stored.
 *
 * The help texts of the options, tests and loads (`.help`, `.intro` and
 * `.examples` of the descriptors) live in src/help.txt; the build turns that
 * file into the header help.h (probe/tools/helpgen.py), one macro per text.
 * A board build (RTPROBE_BOARD) packs them: a byte from 0x80 up stands for a
 * pair of bytes, each of which may be such a code again.  Whatever prints
 * one of these texts reads it through text_get(), which gives back the plain
 * text in either build.
 */
#ifndef RTP_TEXT_H
#define RTP_TEXT_H

#include <stddef.h>

/* Room for the longest help text once unpacked (helpgen.py checks it). */
#define TEXT_MAX 2048

/* The plain text: text itself when not packed, else unpacked into buf. */
const char *text_get(const char *text, char *buf, size_t size);

#endif /* RTP_TEXT_H */
