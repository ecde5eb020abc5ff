/* SPDX-License-Identifier: MIT */
/*
 * inaddr.h - numeric IPv4 and IPv6 address text to network-order bytes,
 * as inet_pton accepts it, without the C library's inet_pton (whose IPv6
 * scanner is larger than this for the two addresses load net reads).
 */
#ifndef RTP_INADDR_H
#define RTP_INADDR_H

#include <stdbool.h>

/*
 * A dotted quad: four decimal parts 0..255 of one to three digits, no
 * leading zero, nothing else.  True and out[0..3] set when text is one.
 */
bool inaddr_parse4(const char *text, unsigned char out[4]);

/*
 * An IPv6 address: eight groups of one to four hex digits split by ':',
 * or fewer with one "::" standing for one or more zero groups; the last
 * two groups may be a dotted quad.  True and out[0..15] set when text is one.
 */
bool inaddr_parse6(const char *text, unsigned char out[16]);

#endif /* RTP_INADDR_H */
