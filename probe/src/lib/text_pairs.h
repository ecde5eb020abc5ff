/* SPDX-License-Identifier: MIT */
/*
 * text_pairs.h - the byte pairs that packed help texts' codes stand for.
 *
 * None in the sources: texts are plain.  A packed build (rtbench/probetext.py)
 * replaces this file in its copy of the sources with the pairs it chose.
 */
#define TEXT_PAIRS 0
static const unsigned char text_pairs[1][2];
