// SPDX-License-Identifier: MIT
/*
 * catalogue.c - the tests rtprobe offers, in `rtprobe --help` order.
 * Adding a test is adding its file under tests/ and one line here.
 */
#include "testdesc.h"

extern const struct test_desc test_cyclic, test_periodic, test_clock,
	test_wakeup, test_noise, test_ctx, test_ipc, test_event, test_pi,
	test_hackbench;

const struct test_desc *const rtp_tests[] = {
	&test_cyclic, &test_periodic, &test_clock, &test_wakeup, &test_noise,
	&test_ctx, &test_ipc, &test_event, &test_pi, &test_hackbench, NULL,
};
