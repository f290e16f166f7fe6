/*
 * ws_rtt_client: measures WebSocket echo round trips for Parley's network benchmark.
 *
 *   ws_rtt_client <port> <path> <connections> <message-bytes> <rounds>
 *
 * Opens <connections> WebSockets to 127.0.0.1:<port><path>. Each round sends one binary
 * message of <message-bytes> on every connection at once and waits for every echo; the time
 * from a connection's send to its complete echo is one sample. The first rounds warm up and
 * are not counted. Prints "p50_us p99_us samples" on stdout.
 *
 * Plain sockets and hand-written framing keep the client cheap, so differences between
 * servers show.
 *
 * Build: scripts/build-bench-tools
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WARMUP_ROUNDS 20

struct connection {
	int fd;
	unsigned char *in;      /* bytes received for the current echo */
	size_t have, capacity;
	uint64_t sent_ns;
	int done;
};

static uint64_t
now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static int
write_all(int fd, const unsigned char *data, size_t length)
{
	while (length) {
		ssize_t n = send(fd, data, length, MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct pollfd p = { fd, POLLOUT, 0 };
			poll(&p, 1, 1000);
			continue;
		}
		if (n <= 0)
			return -1;
		data += n;
		length -= (size_t)n;
	}
	return 0;
}

static int
open_websocket(int port, const char *path)
{
	struct sockaddr_in address;
	char request[512], response[2048];
	size_t have = 0;
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	memset(&address, 0, sizeof(address));
	address.sin_family = AF_INET;
	address.sin_port = htons((uint16_t)port);
	address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof(address)))
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	snprintf(request, sizeof(request),
		 "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\n"
		 "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
		 "Sec-WebSocket-Version: 13\r\n\r\n", path, port);
	if (write_all(fd, (unsigned char *)request, strlen(request)))
		return -1;
	while (have < sizeof(response) - 1) {
		ssize_t n = recv(fd, response + have, sizeof(response) - 1 - have, 0);

		if (n <= 0)
			return -1;
		have += (size_t)n;
		response[have] = '\0';
		if (strstr(response, "\r\n\r\n"))
			break;
	}
	if (strncmp(response, "HTTP/1.1 101", 12))
		return -1;
	return fd;
}

/* A masked binary frame carrying `size` bytes (client frames must be masked). */
static unsigned char *
make_frame(size_t size, size_t *frame_length)
{
	const unsigned char mask[4] = { 0x12, 0x34, 0x56, 0x78 };
	size_t header = size < 126 ? 2 : (size < 65536 ? 4 : 10), i;
	unsigned char *frame = malloc(header + 4 + size), *p = frame;

	*p++ = 0x82;
	if (size < 126)
		*p++ = (unsigned char)(0x80 | size);
	else if (size < 65536) {
		*p++ = 0x80 | 126;
		*p++ = (unsigned char)(size >> 8);
		*p++ = (unsigned char)size;
	} else {
		*p++ = 0x80 | 127;
		for (i = 0; i < 8; i++)
			*p++ = (unsigned char)((uint64_t)size >> (56 - 8 * i));
	}
	memcpy(p, mask, 4);
	p += 4;
	for (i = 0; i < size; i++)
		p[i] = (unsigned char)(i * 7) ^ mask[i % 4];
	*frame_length = (size_t)(p - frame) + size;
	return frame;
}

/* Whether `c->in` holds a complete unfragmented-or-fragmented message of `size` bytes. */
static int
echo_complete(struct connection *c, size_t size)
{
	size_t offset = 0, payload = 0;

	while (offset + 2 <= c->have) {
		unsigned char fin = c->in[offset] & 0x80;
		size_t length = c->in[offset + 1] & 0x7f, header = 2;

		if (length == 126) {
			if (offset + 4 > c->have)
				return 0;
			length = (size_t)c->in[offset + 2] << 8 | c->in[offset + 3];
			header = 4;
		} else if (length == 127) {
			size_t i;
			if (offset + 10 > c->have)
				return 0;
			for (length = 0, i = 0; i < 8; i++)
				length = length << 8 | c->in[offset + 2 + i];
			header = 10;
		}
		if (offset + header + length > c->have)
			return 0;
		payload += length;
		offset += header + length;
		if (fin)
			return payload == size;
	}
	return 0;
}

static int
compare(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	int port, count, rounds, round, i;
	size_t size, frame_length, samples = 0;
	unsigned char *frame;
	struct connection *connections;
	struct pollfd *polls;
	nfds_t watched;
	uint64_t *rtt;

	if (argc != 6) {
		fprintf(stderr, "usage: ws_rtt_client <port> <path> <connections> <bytes> <rounds>\n");
		return 2;
	}
	port = atoi(argv[1]);
	count = atoi(argv[3]);
	size = (size_t)atol(argv[4]);
	rounds = atoi(argv[5]);
	if (count <= 0 || count > 10000 || rounds <= 0) {
		fprintf(stderr, "ws_rtt_client: connections must be 1…10000 and rounds positive\n");
		return 2;
	}
	frame = make_frame(size, &frame_length);
	connections = calloc((size_t)count, sizeof(*connections));
	polls = calloc((size_t)count, sizeof(*polls));
	watched = (nfds_t)(unsigned int)count;
	rtt = calloc((size_t)count * (size_t)rounds, sizeof(*rtt));
	if (!connections || !polls || !rtt)
		return 1;

	for (i = 0; i < count; i++) {
		connections[i].fd = open_websocket(port, argv[2]);
		if (connections[i].fd < 0) {
			fprintf(stderr, "ws_rtt_client: connection %d failed\n", i);
			return 1;
		}
		connections[i].capacity = size + 64;
		connections[i].in = malloc(connections[i].capacity);
	}

	for (round = 0; round < WARMUP_ROUNDS + rounds; round++) {
		int pending = count;

		for (i = 0; i < count; i++) {
			connections[i].have = 0;
			connections[i].done = 0;
			connections[i].sent_ns = now_ns();
			if (write_all(connections[i].fd, frame, frame_length))
				return 1;
		}
		while (pending) {
			for (i = 0; i < count; i++) {
				polls[i].fd = connections[i].done ? -1 : connections[i].fd;
				polls[i].events = POLLIN;
			}
			if (poll(polls, watched, 10000) <= 0) {
				fprintf(stderr, "ws_rtt_client: timed out waiting for echoes\n");
				return 1;
			}
			for (i = 0; i < count; i++) {
				struct connection *c = &connections[i];
				ssize_t n;

				if (c->done || !(polls[i].revents & (POLLIN | POLLHUP | POLLERR)))
					continue;
				if (c->have == c->capacity) {
					c->capacity *= 2;
					c->in = realloc(c->in, c->capacity);
				}
				n = recv(c->fd, c->in + c->have, c->capacity - c->have, 0);
				if (n <= 0) {
					fprintf(stderr, "ws_rtt_client: connection %d closed\n", i);
					return 1;
				}
				c->have += (size_t)n;
				if (echo_complete(c, size)) {
					c->done = 1;
					pending--;
					if (round >= WARMUP_ROUNDS)
						rtt[samples++] = now_ns() - c->sent_ns;
				}
			}
		}
	}

	qsort(rtt, samples, sizeof(*rtt), compare);
	printf("%.1f %.1f %zu\n", rtt[(samples - 1) / 2] / 1000.0,
	       rtt[(size_t)((double)(samples - 1) * 0.99)] / 1000.0, samples);
	for (i = 0; i < count; i++)
		close(connections[i].fd);
	return 0;
}
