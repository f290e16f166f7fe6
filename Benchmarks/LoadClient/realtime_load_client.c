/*
 * realtime_load_client: the load of Parley's server benchmark. N realtime sessions, each
 * streaming turns of audio paced in real time, all driven by one thread of plain C, so that the
 * load takes as little as possible of the CPU the server under test shares.
 *
 *   realtime_load_client <servers> <path> <token> <sessions> <messages-file> <chunks> <chunk-ms> <turn-chunks>
 *
 * <servers> is a port on 127.0.0.1, or a comma-separated list of ADDRESS:PORT (IPv4): session i
 * connects to server i mod (number of servers), round-robin, as a load balancer would spread
 * them. A "%d" in <path> becomes the session's number (0, 1, ...), e.g. to give each session an
 * instance of its own: /v1/realtime?instance=inst_%d.
 * <messages-file> holds one input_audio_buffer.append event per line; chunk k of every session
 * is line k mod (number of lines). The client opens the sessions (Authorization: Bearer
 * <token>), prints "connected <n>", waits for a line on standard input, and starts 200 ms later.
 * Session i sends chunk k at start + (first_i + k) * <chunk-ms> + phase_i, where
 * first_i = i * <turn-chunks> / n and phase_i = (i * <chunk-ms> / n) whole milliseconds: turns
 * are spread evenly over one turn's length, sends evenly over the tick. After its last chunk a
 * session closes; the run ends when the server has closed every session.
 *
 * Output, once the run is over (times in µs after the start):
 *   sent <session> <t0> <t1> ...          when each chunk was handed to the socket
 *   turn <session> <audio_end_ms> <t>     a speech_stopped and when the first audio delta after it arrived
 *   metrics <session> <event>             each parley.turn_metrics event, as received
 *   lateness_us <worst>                   how late the latest send was
 *   start_us <t>                          the start itself, in CLOCK_MONOTONIC microseconds
 *   cpu_seconds <s>                       this process's CPU time from the start to the end
 *
 * Build: scripts/build-bench-tools
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define START_DELAY_US 200000
#define DRAIN_TIMEOUT_US 15000000

struct buffer {
	unsigned char *bytes;
	size_t length, capacity;
};

struct turn {
	int session;
	long audio_end_ms;
	int64_t first_audio_us;
};

struct session {
	int fd;
	int index;
	int first_tick;
	int64_t phase_us;
	int64_t *sent_us;
	struct buffer in;       /* received bytes not yet parsed */
	struct buffer message;  /* a fragmented message being assembled */
	struct buffer out;      /* bytes the socket did not take yet */
	int closed;             /* the connection is over (see finish) */
	int awaiting_audio;     /* a speech_stopped came and no audio delta yet */
	long audio_end_ms;
};

static struct turn *turns;
static size_t turn_count, turn_capacity;
static struct buffer metrics;
static int64_t start_us;
static int epoll_fd;
static int open_count;

static void
fail(const char *what)
{
	fprintf(stderr, "realtime_load_client: %s\n", what);
	exit(1);
}

static int64_t
now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static void
append(struct buffer *b, const void *bytes, size_t length)
{
	if (b->length + length > b->capacity) {
		size_t capacity = b->capacity ? b->capacity : 4096;

		while (capacity < b->length + length)
			capacity *= 2;
		b->bytes = realloc(b->bytes, capacity);
		if (!b->bytes)
			fail("out of memory");
		b->capacity = capacity;
	}
	memcpy(b->bytes + b->length, bytes, length);
	b->length += length;
}

static void
consume(struct buffer *b, size_t length)
{
	memmove(b->bytes, b->bytes + length, b->length - length);
	b->length -= length;
}

/* Ends a session whose server closed it (or whose socket failed). */
static void
finish(struct session *s)
{
	if (s->closed)
		return;
	s->closed = 1;
	epoll_ctl(epoll_fd, EPOLL_CTL_DEL, s->fd, NULL);
	close(s->fd);
	open_count--;
}

/* A client frame (masked, with an all-zero key: the payload goes out as it is). */
static void
make_frame(struct buffer *frame, unsigned char opcode, const void *payload, size_t length)
{
	unsigned char header[14];
	size_t used = 0, i;

	header[used++] = 0x80 | opcode;
	if (length < 126) {
		header[used++] = (unsigned char)(0x80 | length);
	} else if (length < 65536) {
		header[used++] = 0x80 | 126;
		header[used++] = (unsigned char)(length >> 8);
		header[used++] = (unsigned char)length;
	} else {
		header[used++] = 0x80 | 127;
		for (i = 0; i < 8; i++)
			header[used++] = (unsigned char)((uint64_t)length >> (56 - 8 * i));
	}
	memset(header + used, 0, 4);
	used += 4;
	append(frame, header, used);
	append(frame, payload, length);
}

/* Sends what `s` has queued, then `bytes`; keeps what the socket does not take. */
static void
send_bytes(struct session *s, const unsigned char *bytes, size_t length)
{
	if (s->closed)
		return;
	if (length)
		append(&s->out, bytes, length);
	while (s->out.length) {
		ssize_t n = send(s->fd, s->out.bytes, s->out.length, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			struct epoll_event event = { .events = EPOLLIN | EPOLLOUT, .data.ptr = s };
			epoll_ctl(epoll_fd, EPOLL_CTL_MOD, s->fd, &event);
			return;
		}
		if (n <= 0) {
			finish(s);
			return;
		}
		consume(&s->out, (size_t)n);
	}
}

#define MAX_SERVERS 16

static struct sockaddr_in servers[MAX_SERVERS];
static int server_count;

/* Reads <servers>: a port on 127.0.0.1, or ADDRESS:PORT[,ADDRESS:PORT...]. */
static void
read_servers(const char *text)
{
	char copy[1024], *item, *rest;

	if (strlen(text) >= sizeof(copy))
		fail("the server list is too long");
	strcpy(copy, text);
	for (item = strtok_r(copy, ",", &rest); item; item = strtok_r(NULL, ",", &rest)) {
		struct sockaddr_in *address = &servers[server_count];
		char *colon = strrchr(item, ':');
		int port = atoi(colon ? colon + 1 : item);

		if (server_count == MAX_SERVERS)
			fail("at most 16 servers");
		memset(address, 0, sizeof(*address));
		address->sin_family = AF_INET;
		address->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (colon) {
			*colon = '\0';
			if (inet_pton(AF_INET, item, &address->sin_addr) != 1)
				fail("a server address is not IPv4");
		}
		if (port <= 0 || port > 65535)
			fail("a server port is not 1-65535");
		address->sin_port = htons((uint16_t)port);
		server_count++;
	}
	if (!server_count)
		fail("no server");
}

static int
connect_session(int number, const char *path_template, const char *token, struct session *s)
{
	const struct sockaddr_in *address = &servers[number % server_count];
	char request[2048], path[1024], host[INET_ADDRSTRLEN];
	unsigned char response[8192];
	size_t have = 0;
	int one = 1, length;

	const char *slot = strstr(path_template, "%d");
	int written = slot ? snprintf(path, sizeof(path), "%.*s%d%s", (int)(slot - path_template), path_template, number, slot + 2)
			   : snprintf(path, sizeof(path), "%s", path_template);

	if (written < 0 || written >= (int)sizeof(path))
		return -1;
	inet_ntop(AF_INET, &address->sin_addr, host, sizeof(host));
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (s->fd < 0 || connect(s->fd, (const struct sockaddr *)address, sizeof(*address)))
		return -1;
	setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	length = snprintf(request, sizeof(request),
			  "GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\n"
			  "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
			  "Sec-WebSocket-Version: 13\r\nAuthorization: Bearer %s\r\n\r\n",
			  path, host, ntohs(address->sin_port), token);
	if (length <= 0 || (size_t)length >= sizeof(request) ||
	    send(s->fd, request, (size_t)length, MSG_NOSIGNAL) != length)
		return -1;
	for (;;) {
		ssize_t n = recv(s->fd, response + have, sizeof(response) - 1 - have, 0);
		unsigned char *end;

		if (n <= 0)
			return -1;
		have += (size_t)n;
		response[have] = '\0';
		end = (unsigned char *)strstr((char *)response, "\r\n\r\n");
		if (!end) {
			if (have == sizeof(response) - 1)
				return -1;
			continue;
		}
		if (strncmp((char *)response, "HTTP/1.1 101", 12))
			return -1;
		/* Events the server sent right after the upgrade came in the same read. */
		end += 4;
		append(&s->in, end, have - (size_t)(end - response));
		return 0;
	}
}

static int
starts_with(const unsigned char *text, size_t length, const char *prefix)
{
	size_t n = strlen(prefix);

	return length >= n && !memcmp(text, prefix, n);
}

/* The number after `"key":` in a JSON text, or -1. */
static long
number_after(const unsigned char *text, size_t length, const char *key)
{
	size_t n = strlen(key), i;

	for (i = 0; i + n < length; i++)
		if (!memcmp(text + i, key, n))
			return strtol((const char *)text + i + n, NULL, 10);
	return -1;
}

static void
handle_text(struct session *s, const unsigned char *text, size_t length, int64_t received_us)
{
	if (starts_with(text, length, "{\"type\":\"response.output_audio.delta\"")) {
		if (!s->awaiting_audio)
			return;
		s->awaiting_audio = 0;
		if (turn_count == turn_capacity) {
			turn_capacity = turn_capacity ? 2 * turn_capacity : 1024;
			turns = realloc(turns, turn_capacity * sizeof(*turns));
			if (!turns)
				fail("out of memory");
		}
		turns[turn_count++] = (struct turn){ s->index, s->audio_end_ms, received_us - start_us };
	} else if (starts_with(text, length, "{\"type\":\"input_audio_buffer.speech_stopped\"")) {
		/* The text was copied with a terminating NUL (see handle_frames), so strtol stops. */
		s->audio_end_ms = number_after(text, length, "\"audio_end_ms\":");
		s->awaiting_audio = s->audio_end_ms >= 0;
	} else if (starts_with(text, length, "{\"type\":\"parley.turn_metrics\"")) {
		char prefix[32];
		int n = snprintf(prefix, sizeof(prefix), "metrics %d ", s->index);

		append(&metrics, prefix, (size_t)n);
		append(&metrics, text, length);
		append(&metrics, "\n", 1);
	}
}

/* Parses the complete frames in `s->in`. */
static void
handle_frames(struct session *s, int64_t received_us)
{
	size_t offset = 0;

	for (;;) {
		unsigned char *p = s->in.bytes + offset;
		size_t available = s->in.length - offset, header = 2, length, i;
		unsigned char opcode, fin, masked;

		if (available < 2)
			break;
		fin = p[0] & 0x80;
		opcode = p[0] & 0x0f;
		masked = p[1] & 0x80;
		length = p[1] & 0x7f;
		if (length == 126) {
			if (available < 4)
				break;
			length = (size_t)p[2] << 8 | p[3];
			header = 4;
		} else if (length == 127) {
			if (available < 10)
				break;
			for (length = 0, i = 0; i < 8; i++)
				length = length << 8 | p[2 + i];
			header = 10;
		}
		if (masked)
			header += 4;
		if (available < header + length)
			break;
		if (masked)
			for (i = 0; i < length; i++)
				p[header + i] ^= p[header - 4 + (i & 3)];
		offset += header + length;

		if (opcode == 0x8) {
			finish(s);
			return;
		} else if (opcode == 0x9) {
			struct buffer pong = { 0 };

			make_frame(&pong, 0xA, p + header, length);
			send_bytes(s, pong.bytes, pong.length);
			free(pong.bytes);
		} else if (opcode == 0x1 || opcode == 0x2 || opcode == 0x0) {
			append(&s->message, p + header, length);
			if (fin) {
				append(&s->message, "", 1);
				handle_text(s, s->message.bytes, s->message.length - 1, received_us);
				s->message.length = 0;
			}
		}
	}
	consume(&s->in, offset);
}

static void
receive(struct session *s)
{
	unsigned char chunk[65536];
	int64_t received_us = now_us();

	for (;;) {
		ssize_t n = recv(s->fd, chunk, sizeof(chunk), MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			handle_frames(s, received_us);
			finish(s);
			return;
		}
		append(&s->in, chunk, (size_t)n);
	}
	handle_frames(s, received_us);
}

/* Reads the messages file: one event per line, each made into a client frame. */
static struct buffer *
read_frames(const char *path, size_t *count)
{
	FILE *file = fopen(path, "r");
	struct buffer *frames = NULL;
	char *line = NULL;
	size_t capacity = 0;
	ssize_t length;

	if (!file)
		fail("cannot open the messages file");
	*count = 0;
	while ((length = getline(&line, &capacity, file)) > 0) {
		while (length && (line[length - 1] == '\n' || line[length - 1] == '\r'))
			length--;
		if (!length)
			continue;
		frames = realloc(frames, (*count + 1) * sizeof(*frames));
		if (!frames)
			fail("out of memory");
		memset(&frames[*count], 0, sizeof(*frames));
		make_frame(&frames[*count], 0x1, line, (size_t)length);
		(*count)++;
	}
	free(line);
	fclose(file);
	if (!*count)
		fail("the messages file is empty");
	return frames;
}

static double
cpu_seconds(void)
{
	struct rusage usage;

	getrusage(RUSAGE_SELF, &usage);
	return (double)usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 +
	       (double)usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

int
main(int argc, char **argv)
{
	static const unsigned char close_frame[] = { 0x88, 0x82, 0, 0, 0, 0, 0x03, 0xe8 };
	struct session *sessions;
	struct buffer *frames;
	size_t frame_count;
	struct epoll_event events[256];
	int requested, connected = 0, chunks, chunk_ms, turn_chunks, i;
	int tick = 0, cursor = 0, ticks, last_tick = 0;
	int64_t worst_lateness = 0, drain_deadline = 0;
	double cpu_start;
	char go[64];

	if (argc != 9) {
		fprintf(stderr, "usage: realtime_load_client <servers> <path> <token> <sessions> "
				"<messages-file> <chunks> <chunk-ms> <turn-chunks>\n");
		return 2;
	}
	read_servers(argv[1]);
	requested = atoi(argv[4]);
	chunks = atoi(argv[6]);
	chunk_ms = atoi(argv[7]);
	turn_chunks = atoi(argv[8]);
	if (requested <= 0 || requested > 20000 || chunks <= 0 || chunk_ms <= 0 || turn_chunks < 0)
		fail("sessions (1-20000), chunks and chunk-ms must be positive");
	frames = read_frames(argv[5], &frame_count);

	sessions = calloc((size_t)requested, sizeof(*sessions));
	epoll_fd = epoll_create1(0);
	if (!sessions || epoll_fd < 0)
		fail("cannot set up");
	for (i = 0; i < requested; i++) {
		struct session *s = &sessions[connected];

		memset(s, 0, sizeof(*s));
		if (connect_session(i, argv[2], argv[3], s)) {
			fprintf(stderr, "realtime_load_client: session %d did not connect\n", i);
			if (s->fd >= 0)
				close(s->fd);
			free(s->in.bytes);
			continue;
		}
		connected++;
	}
	for (i = 0; i < connected; i++) {
		struct session *s = &sessions[i];
		struct epoll_event event = { .events = EPOLLIN, .data.ptr = s };

		s->index = i;
		s->first_tick = (int)((int64_t)i * turn_chunks / connected);
		s->phase_us = (int64_t)i * chunk_ms / connected * 1000;
		s->sent_us = calloc((size_t)chunks, sizeof(int64_t));
		if (!s->sent_us || epoll_ctl(epoll_fd, EPOLL_CTL_ADD, s->fd, &event))
			fail("cannot watch a session");
		if (s->first_tick + chunks > last_tick)
			last_tick = s->first_tick + chunks;
	}
	ticks = last_tick;
	printf("connected %d\n", connected);
	fflush(stdout);
	if (!fgets(go, sizeof(go), stdin))
		fail("standard input closed before the start");

	cpu_start = cpu_seconds();
	start_us = now_us() + START_DELAY_US;
	open_count = connected;
	while (open_count > 0) {
		int64_t now = now_us(), next_due = -1, wait_us;
		struct timespec timeout;
		int ready;

		/* Send every chunk due by now, in (tick, session) order: due times never decrease. */
		while (tick < ticks) {
			struct session *s = &sessions[cursor];
			int chunk = tick - s->first_tick;

			if (chunk >= 0 && chunk < chunks && !s->closed) {
				int64_t due = start_us + (int64_t)tick * chunk_ms * 1000 + s->phase_us;

				if (due > now + 50) {
					next_due = due;
					break;
				}
				now = now_us();
				if (now - due > worst_lateness)
					worst_lateness = now - due;
				s->sent_us[chunk] = now - start_us;
				send_bytes(s, frames[chunk % frame_count].bytes, frames[chunk % frame_count].length);
				if (chunk == chunks - 1)
					send_bytes(s, close_frame, sizeof(close_frame));
			}
			if (++cursor == connected) {
				cursor = 0;
				tick++;
			}
		}
		if (tick == ticks && !drain_deadline)
			drain_deadline = now + DRAIN_TIMEOUT_US;
		if (drain_deadline && now > drain_deadline) {
			fprintf(stderr, "realtime_load_client: %d sessions still open after the run\n", open_count);
			break;
		}

		wait_us = next_due >= 0 ? next_due - now : 100000;
		if (wait_us < 0)
			wait_us = 0;
		timeout.tv_sec = wait_us / 1000000;
		timeout.tv_nsec = (wait_us % 1000000) * 1000;
		ready = epoll_pwait2(epoll_fd, events, 256, &timeout, NULL);
		if (ready < 0 && errno != EINTR)
			fail("epoll_pwait2 failed");
		for (i = 0; i < ready; i++) {
			struct session *s = events[i].data.ptr;

			if (events[i].events & EPOLLOUT) {
				struct epoll_event event = { .events = EPOLLIN, .data.ptr = s };

				epoll_ctl(epoll_fd, EPOLL_CTL_MOD, s->fd, &event);
				send_bytes(s, NULL, 0);
			}
			if (!s->closed && events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				receive(s);
		}
	}

	for (i = 0; i < connected; i++) {
		int k;

		printf("sent %d", i);
		for (k = 0; k < chunks; k++)
			printf(" %lld", (long long)sessions[i].sent_us[k]);
		printf("\n");
	}
	for (size_t t = 0; t < turn_count; t++)
		printf("turn %d %ld %lld\n", turns[t].session, turns[t].audio_end_ms, (long long)turns[t].first_audio_us);
	fwrite(metrics.bytes, 1, metrics.length, stdout);
	printf("lateness_us %lld\n", (long long)worst_lateness);
	printf("start_us %lld\n", (long long)start_us);
	printf("cpu_seconds %.6f\n", cpu_seconds() - cpu_start);
	return 0;
}
