/* SPDX-License-Identifier: MIT */
/*
 * fdio.h - read or write a whole buffer on a file descriptor.
 *
 * read(2) and write(2) on pipes and sockets may move fewer bytes than asked
 * and fail with EINTR when a signal arrives; these helpers loop until the
 * whole buffer has moved.  Meant for blocking descriptors: EAGAIN from a
 * non-blocking one is an error like any other.
 */
#ifndef RTP_FDIO_H
#define RTP_FDIO_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Read exactly len bytes into buf.  Returns len, 0 if end of file came first
 * (a partial record is dropped), or -1 with errno set.
 */
ssize_t fdio_read_full(int fd, void *buf, size_t len);

/* Write all len bytes of buf.  Returns 0, or -1 with errno set. */
int fdio_write_full(int fd, const void *buf, size_t len);

#endif /* RTP_FDIO_H */
