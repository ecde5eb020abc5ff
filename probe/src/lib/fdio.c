// SPDX-License-Identifier: MIT
/*
 * fdio.c - read or write a whole buffer on a file descriptor (see fdio.h).
 */
#include "fdio.h"

#include <errno.h>
#include <unistd.h>

/* Read exactly len bytes, retrying on EINTR; len, 0 at end of file, or -1. */
ssize_t fdio_read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = read(fd, (char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		done += (size_t)n;
	}
	return (ssize_t)len;
}

/* Write all len bytes, retrying on EINTR; 0 or -1. */
int fdio_write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = write(fd, (const char *)buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		done += (size_t)n;
	}
	return 0;
}
