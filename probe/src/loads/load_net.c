// SPDX-License-Identifier: MIT
/*
 * load_net.c - `rtprobe load net`: a UDP flood at a rate in packets/s.
 *
 * By default the load binds its own receiver to 127.0.0.1 on an ephemeral
 * port and floods it, so the packets cross the loopback stack twice (send
 * and receive) and the receiver counts what arrived.  --target ADDR:PORT
 * sends elsewhere; an address outside loopback (127.0.0.0/8, ::1) is
 * refused unless --allow-remote, and is never contacted before that check.
 * Addresses are numeric only: nothing is resolved.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "fmt.h"
#include "inaddr.h"
#include "load.h"
#include "opt.h"
#include "rtprobe.h"

#define NET_BATCH 64
#define NET_MAX_PAYLOAD 65507

enum { NET_SENT, NET_BYTES_SENT, NET_SEND_ERRORS, NET_RECEIVED };

static const char *const net_counters[] = {
	"packets_sent", "bytes_sent", "send_errors", "packets_received", NULL,
};

static const struct opt_desc net_options[] = {
	{ .name = "target", .id = LOPT_TARGET, .type = OPT_TEXT,
	  .metavar = "ADDR:PORT",
	  .help = HELP_LOAD_NET_TARGET },
	{ .name = "allow-remote", .id = LOPT_ALLOW_REMOTE, .type = OPT_FLAG,
	  .help = HELP_LOAD_NET_ALLOW_REMOTE },
	{ .name = "size", .id = LOPT_SIZE, .type = OPT_SIZE, .def = "64",
	  .metavar = "BYTES", .help = HELP_LOAD_NET_SIZE },
	{ .name = NULL },
};

/* The net kind's state. */
struct net_state {
	struct sockaddr_storage target;
	socklen_t target_len;
	char target_text[64];
	bool own_receiver;
	int rx_fd;
	int tx_fd;
	char *payload;
};

/* Print the net kind's example. */
static void net_usage(FILE *f)
{
	fmt_fprintf(f,
		    "Example: rtprobe load net --rate 5000 --duration 10s\n");
}

/*
 * Parse a numeric "a.b.c.d:port" or "[v6]:port" into ss; 0 or -1 with a
 * reason in err.
 */
static int net_parse_target(const char *text, struct sockaddr_storage *ss,
			    socklen_t *len, char *err, size_t errlen)
{
	char host[64];
	const char *colon, *port_text, *host_start = text;
	size_t host_len;
	uint64_t port;
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (text[0] == '[') {
		colon = strstr(text, "]:");
		if (!colon) {
			fmt_snprintf(err, errlen, "use [IPv6]:PORT");
			return -1;
		}
		host_start = text + 1;
		host_len = (size_t)(colon - host_start);
		port_text = colon + 2;
	} else {
		colon = strrchr(text, ':');
		if (!colon) {
			fmt_snprintf(err, errlen, "use ADDR:PORT, e.g. 127.0.0.1:9");
			return -1;
		}
		host_len = (size_t)(colon - text);
		port_text = colon + 1;
	}
	if (host_len == 0 || host_len >= sizeof(host)) {
		fmt_snprintf(err, errlen, "missing or too long address");
		return -1;
	}
	memcpy(host, host_start, host_len);
	host[host_len] = 0;
	if (opt_u64_try(port_text, 1, 65535, &port, err, errlen)) {
		fmt_snprintf(err, errlen, "port must be 1..65535");
		return -1;
	}
	if (text[0] != '[' &&
	    inaddr_parse4(host, (unsigned char *)&in4->sin_addr)) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		*len = sizeof(*in4);
		return 0;
	}
	if (text[0] == '[' && inaddr_parse6(host, in6->sin6_addr.s6_addr)) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		return 0;
	}
	fmt_snprintf(err, errlen, "'%s' is not a numeric IPv4 or [IPv6] address",
		     host);
	return -1;
}

/* Whether the address is loopback (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104). */
static bool net_is_loopback(const struct sockaddr_storage *ss)
{
	const struct sockaddr_in *in4 = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

	if (ss->ss_family == AF_INET)
		return (ntohl(in4->sin_addr.s_addr) >> 24) == 127;
	if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
		return true;
	return IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) &&
	       in6->sin6_addr.s6_addr[12] == 127;
}

/* Parse the net kind's options. */
static void net_handle(struct load_cfg *cfg, int id, const char *arg)
{
	switch (id) {
	case LOPT_TARGET:
		cfg->target = arg;
		break;
	case LOPT_SIZE:
		cfg->size = opt_size("--size", arg);
		if (cfg->size < 1 || cfg->size > NET_MAX_PAYLOAD)
			opt_fail("--size", arg, "must be 1..%d bytes",
				 NET_MAX_PAYLOAD);
		cfg->size_given = true;
		break;
	case LOPT_ALLOW_REMOTE:
		cfg->allow_remote = true;
		break;
	}
}

/* Check --target before anything is sent; default payload 64 bytes. */
static void net_finish(struct load_cfg *cfg)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char err[128];

	if (!cfg->size_given)
		cfg->size = 64;
	if (!cfg->target)
		return;
	if (net_parse_target(cfg->target, &ss, &len, err, sizeof(err)))
		opt_fail("--target", cfg->target, "%s", err);
	if (!net_is_loopback(&ss) && !cfg->allow_remote)
		opt_fail("--target", cfg->target,
			 "not a loopback address; add --allow-remote to flood "
			 "a remote host you own");
}

/* Count received packets until stop. */
static void *net_receiver(void *arg)
{
	struct load_run *r = arg;
	struct net_state *st = r->state;
	struct mmsghdr msgs[NET_BATCH];
	struct iovec iov[NET_BATCH];
	char *buf = malloc((size_t)NET_BATCH * 2048);
	int i, n;

	if (!buf) {
		load_fail(r->shared, "receiver: out of memory");
		return (void *)1;
	}
	memset(msgs, 0, sizeof(msgs));
	for (i = 0; i < NET_BATCH; i++) {
		iov[i].iov_base = buf + (size_t)i * 2048;
		iov[i].iov_len = 2048;      /* longer datagrams are truncated */
		msgs[i].msg_hdr.msg_iov = &iov[i];
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	while (!load_stopping(r->shared)) {
		n = recvmmsg(st->rx_fd, msgs, NET_BATCH, 0, NULL);
		if (n > 0) {
			load_count(r->shared, NET_RECEIVED, (uint64_t)n);
		} else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
			   errno != EINTR) {
			load_fail(r->shared, "receiver recvmmsg: %s",
				  strerror(errno));
			break;
		}
	}
	free(buf);
	return NULL;
}

/* Send paced batches with sendmmsg until stop. */
static void *net_sender(void *arg)
{
	struct load_run *r = arg;
	struct net_state *st = r->state;
	struct mmsghdr msgs[NET_BATCH];
	struct iovec iov;
	struct load_pacer pacer;
	uint64_t n;
	int i, sent;

	iov.iov_base = st->payload;
	iov.iov_len = r->cfg.size;
	memset(msgs, 0, sizeof(msgs));
	for (i = 0; i < NET_BATCH; i++) {
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	load_pacer_init(&pacer, r->cfg.rate_max ? 0 : r->cfg.rate, NET_BATCH);
	while ((n = load_pacer_next(&pacer, r->shared))) {
		sent = sendmmsg(st->tx_fd, msgs, (unsigned int)n, 0);
		if (sent < 0) {
			/* ICMP port unreachable, full queues: count, go on */
			if (errno != ECONNREFUSED && errno != ENOBUFS &&
			    errno != EAGAIN && errno != EINTR) {
				load_fail(r->shared, "send to %s: %s",
					  st->target_text, strerror(errno));
				return (void *)1;
			}
			load_count(r->shared, NET_SEND_ERRORS, 1);
			sent = 0;
		}
		load_pacer_done(&pacer, n);
		load_count(r->shared, NET_SENT, (uint64_t)sent);
		load_count(r->shared, NET_BYTES_SENT,
			   (uint64_t)sent * r->cfg.size);
	}
	return NULL;
}

/* Bind the own receiver if needed, connect the sender. */
static int net_prepare(struct load_run *r, char *err, size_t errlen)
{
	struct net_state *st = calloc(1, sizeof(*st));
	struct sockaddr_in *in4;
	struct timeval tv = { .tv_sec = 0, .tv_usec = 100000 };
	int rcvbuf = 4 << 20;
	const unsigned char *octet;

	if (!st) {
		fmt_snprintf(err, errlen, "out of memory");
		return RTP_EXIT_ENV;
	}
	st->rx_fd = st->tx_fd = -1;
	r->state = st;
	load_workers_init(&r->workers, false);
	st->payload = calloc(1, r->cfg.size);
	if (!st->payload) {
		fmt_snprintf(err, errlen, "out of memory");
		return RTP_EXIT_ENV;
	}
	if (r->cfg.target) {
		/* validated in net_finish() */
		net_parse_target(r->cfg.target, &st->target, &st->target_len,
				 err, errlen);
		fmt_snprintf(st->target_text, sizeof(st->target_text), "%s",
			     r->cfg.target);
	} else {
		st->own_receiver = true;
		in4 = (struct sockaddr_in *)&st->target;
		in4->sin_family = AF_INET;
		in4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		st->target_len = sizeof(*in4);
		st->rx_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (st->rx_fd < 0 ||
		    bind(st->rx_fd, (struct sockaddr *)&st->target,
			 st->target_len) ||
		    getsockname(st->rx_fd, (struct sockaddr *)&st->target,
				&st->target_len) ||
		    setsockopt(st->rx_fd, SOL_SOCKET, SO_RCVTIMEO, &tv,
			       sizeof(tv))) {
			fmt_snprintf(err, errlen, "receiver socket on 127.0.0.1: %s",
				     strerror(errno));
			return RTP_EXIT_ENV;
		}
		/* a larger queue if allowed; the default still works */
		setsockopt(st->rx_fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
			   sizeof(rcvbuf));
		/* the bound address, in network order (inet_ntop would bring printf) */
		octet = (const unsigned char *)&in4->sin_addr;
		fmt_snprintf(st->target_text, sizeof(st->target_text),
			     "%u.%u.%u.%u:%u", octet[0], octet[1], octet[2],
			     octet[3], ntohs(in4->sin_port));
	}
	st->tx_fd = socket(st->target.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (st->tx_fd < 0) {
		fmt_snprintf(err, errlen, "UDP socket: %s", strerror(errno));
		return RTP_EXIT_ENV;
	}
	/* connect() on UDP only fixes the destination; it sends nothing */
	if (connect(st->tx_fd, (struct sockaddr *)&st->target,
		    st->target_len)) {
		fmt_snprintf(err, errlen, "--target %s: connect: %s",
			     st->target_text, strerror(errno));
		return RTP_EXIT_ENV;
	}
	return 0;
}

/* Write the net kind's parameters. */
static void net_params(struct json *j, const struct load_run *r)
{
	const struct net_state *st = r->state;

	json_str(j, "protocol", "udp");
	json_str(j, "target", st->target_text);
	json_bool(j, "own_receiver", st->own_receiver);
	json_bool(j, "allow_remote", r->cfg.allow_remote);
	json_u64(j, "size", r->cfg.size);
}

/* Start the receiver (if ours) and the sender. */
static int net_start(struct load_run *r, char *err, size_t errlen)
{
	struct net_state *st = r->state;

	if (st->own_receiver &&
	    load_workers_spawn(&r->workers, net_receiver, r, -1, err, errlen))
		return RTP_EXIT_ENV;
	if (load_workers_spawn(&r->workers, net_sender, r, -1, err, errlen))
		return RTP_EXIT_ENV;
	return 0;
}

/* Packets sent per second. */
static double net_achieved(const struct load_run *r, const uint64_t *delta,
			   double seconds)
{
	(void)r;
	return (double)delta[NET_SENT] / seconds;
}

/* The receive rate and loss, when the receiver is ours. */
static void net_result_data(struct json *j, const struct load_run *r,
			    double seconds)
{
	uint64_t sent = atomic_load(&r->shared->counter[NET_SENT]);
	uint64_t received = atomic_load(&r->shared->counter[NET_RECEIVED]);

	/* runs after cleanup: the receiver is ours when there is no --target */
	if (r->cfg.target) {
		json_null(j, "received_per_s");
		json_null(j, "loss");
		return;
	}
	json_double(j, "received_per_s", (double)received / seconds);
	json_double(j, "loss", sent ? 1.0 - (double)received / (double)sent :
				      0.0);
}

/* Close the sockets. */
static void net_cleanup(struct load_run *r)
{
	struct net_state *st = r->state;

	if (!st)
		return;
	if (st->rx_fd >= 0)
		close(st->rx_fd);
	if (st->tx_fd >= 0)
		close(st->tx_fd);
	free(st->payload);
	free(st);
	r->state = NULL;
}

const struct load_kind load_kind_net = {
	.name = "net",
	.unit = "packets/s",
	.summary = "UDP flood, to its own loopback receiver by default",
	.rate_lo = 1,
	.rate_hi = 1e8,
	.counter_names = net_counters,
	.options = net_options,
	.usage = net_usage,
	.handle = net_handle,
	.finish = net_finish,
	.prepare = net_prepare,
	.params = net_params,
	.start = net_start,
	.achieved = net_achieved,
	.result_data = net_result_data,
	.cleanup = net_cleanup,
};
