// SPDX-License-Identifier: MIT
/*
 * test_inaddr.c - inaddr_parse4/6 accept exactly what the C library's
 * inet_pton accepts, with the same bytes: fixed valid and invalid texts,
 * then random texts built from address pieces.  glibc 2.36 and musl 1.2
 * agree on every one of them, so both are the oracle as they are.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "inaddr.h"
#include "tap.h"

/* Whether inaddr_parse<af> and inet_pton agree on text (result and bytes). */
static bool same_as_pton(int af, const char *text)
{
	unsigned char mine[16], libc[16];
	size_t size = af == AF_INET6 ? 16 : 4;
	bool ok = af == AF_INET6 ? inaddr_parse6(text, mine) :
		  inaddr_parse4(text, mine);
	int rc = inet_pton(af, text, libc);

	return ok == (rc == 1) && (!ok || !memcmp(mine, libc, size));
}

static const char *const fixed[] = {
	/* IPv4 */
	"0.0.0.0", "1.2.3.4", "127.0.0.1", "255.255.255.255", "10.0.0.010",
	"01.2.3.4", "1.2.3.04", "00.0.0.0", "1.2.3.004", "256.1.1.1",
	"1.2.3.256", "1.2.3", "1.2.3.4.", "1.2.3.4.5", ".1.2.3.4", "1..2.3",
	"1.2.3.", "", " 1.2.3.4", "1.2.3.4 ", "0x1.2.3.4", "1.2.3.4:80",
	"1234.1.2.3", "1.2.3.1000", "+1.2.3.4", "-1.2.3.4", "1.2.3.4\t",
	/* IPv6 */
	"::", "::1", "1::", "1:2:3:4:5:6:7:8", "0:0:0:0:0:0:0:0", "FE80::1",
	"fe80::AbCd:1", "1:2:3:4:5:6:7::", "::1:2:3:4:5:6:7",
	"1:2:3:4:5:6:7:8::", "::1:2:3:4:5:6:7:8", "1::2:3:4:5:6:7:8",
	"1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", ":::", "1::2::3", "::1::",
	":1::", "1:", ":1", "1:::2", "::0001", "::00001", "12345::",
	"ffff::", "fffff::", "g::", "::ffff:1.2.3.4", "::1.2.3.4",
	"1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5::1.2.3.4", "1:2:3:4:5:6::1.2.3.4",
	"1:2:3:4:5:6:7:1.2.3.4", "1:2:3:4:5:1.2.3.4", "::1.2.3.4:1",
	"::1.2.3", "::01.2.3.4", "::256.1.2.3", "::1.2.3.4.", "::a.b.c.d",
	"1.2.3.4::", "::1234.1.2.3", "fe80::1%1", "fe80::1%eth0", "[::1]",
	" ::1", "::1 ",
};

/* The fixed texts, as IPv4 and as IPv6. */
static void test_fixed(struct tap *t)
{
	size_t i;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		tap_ok(t, same_as_pton(AF_INET, fixed[i]), "'%s' as IPv4",
		       fixed[i]);
		tap_ok(t, same_as_pton(AF_INET6, fixed[i]), "'%s' as IPv6",
		       fixed[i]);
	}
}

/* Random joins of address pieces and separators, as IPv4 and IPv6. */
static void test_random(struct tap *t)
{
	static const char *const pieces[] = {
		"0", "1", "00", "01", "001", "255", "256", "ffff", "FfFf",
		"fffff", "00000", "12345", "abcd", "g", "1.2.3.4", "01.2.3.4",
		"255.255.255.255", "1.2.3", "1.2.3.4.5", "::", ".", "0.0.0.0",
		"1234", "0000", "x", "1.2.3.256",
	};
	unsigned long long seed = 88172645463325252ULL, r;
	char text[128];
	int i, k, n, bad = 0, valid = 0, af;
	unsigned char buf[16];

	for (i = 0; i < 400000; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		af = seed & 1 ? AF_INET6 : AF_INET;
		text[0] = '\0';
		n = (int)((seed >> 1) % 11);
		for (k = 0; k < n; k++) {
			r = seed >> (k * 5);
			if (r & 32)
				strcat(text, af == AF_INET6 ? ":" : ".");
			else
				strcat(text, pieces[(r >> 1) % (sizeof(pieces) /
							sizeof(pieces[0]))]);
		}
		if (inet_pton(af, text, buf) == 1)
			valid++;
		if (!same_as_pton(af, text) && bad++ < 5)
			tap_diag("differs from inet_pton: '%s'", text);
	}
	tap_ok(t, bad == 0, "400000 random texts as inet_pton (%d differ)", bad);
	tap_ok(t, valid > 5000, "%d of them are addresses", valid);
}

int main(void)
{
	struct tap t = { 0, 0 };

	test_fixed(&t);
	test_random(&t);
	return tap_done(&t);
}
