/*
 * raw_lws_server: the baseline for Parley's network benchmark.
 *
 * A plain libwebsockets server doing what the benchmark asks of ParleyNet, with no Swift in
 * between: every HTTP GET is answered "ok" (text/plain, keep-alive) and every WebSocket message
 * on any path is echoed back. It binds 127.0.0.1 on a free port, prints "PORT <n>" on stdout
 * and serves until SIGTERM or SIGINT.
 *
 * By default it runs lws on a libev loop (epoll), as ParleyNet does, so the two differ only in
 * what sits on top of lws; `--poll` runs lws' own poll() loop instead.
 *
 * It writes an echo the way ParleyNet's WebSocketConnection does: at once, from the receive
 * callback, when nothing is ahead of it (no queued message, nothing lws still holds back) and it
 * fits in one write slice; otherwise it queues the message and writes it from the writable
 * callback. (Waiting for a writable callback for every echo costs a loop pass and two
 * epoll_ctl calls, so a baseline that always waited made ParleyNet look faster than raw lws.)
 *
 * Build: scripts/build-bench-tools
 */
#include <ev.h>
#include <libwebsockets.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile sig_atomic_t stopping;
static struct lws_context *context;

/* One received message waiting to be echoed. */
struct message {
	struct message *next;
	size_t length;
	int binary;
	unsigned char *payload; /* LWS_PRE bytes of headroom precede the data */
};

/* Largest message written at once from the receive callback (ParleyNet's write slice, 64 KiB). */
#define WRITE_SLICE (64 * 1024)

/* Per-WebSocket state: the message being assembled and the echo queue. */
struct session {
	unsigned char *assembly;
	size_t assembled, capacity;
	int binary;
	struct message *head, *tail;
};

static void
free_session(struct session *s)
{
	struct message *m = s->head;

	while (m) {
		struct message *next = m->next;
		free(m->payload);
		free(m);
		m = next;
	}
	free(s->assembly);
	memset(s, 0, sizeof(*s));
}

static int
receive(struct lws *wsi, struct session *s, const void *in, size_t len)
{
	struct message *m;

	if (lws_is_first_fragment(wsi)) {
		s->assembled = 0;
		s->binary = lws_frame_is_binary(wsi);
	}
	if (s->assembled + len > s->capacity) {
		size_t capacity = (s->assembled + len) * 2;
		unsigned char *grown = realloc(s->assembly, LWS_PRE + capacity);

		if (!grown)
			return -1;
		s->assembly = grown;
		s->capacity = capacity;
	}
	if (len)
		memcpy(s->assembly + LWS_PRE + s->assembled, in, len);
	s->assembled += len;
	if (!lws_is_final_fragment(wsi))
		return 0;

	if (!s->head && !lws_partial_buffered(wsi) && s->assembled <= WRITE_SLICE) {
		/* Nothing ahead of it: echo now; lws keeps what the socket does not take. */
		if (lws_write(wsi, s->assembly + LWS_PRE, s->assembled,
			      s->binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT) < 0)
			return -1;
		return 0;
	}

	m = calloc(1, sizeof(*m));
	if (!m)
		return -1;
	m->payload = malloc(LWS_PRE + s->assembled + 1);
	if (!m->payload) {
		free(m);
		return -1;
	}
	memcpy(m->payload + LWS_PRE, s->assembly + LWS_PRE, s->assembled);
	m->length = s->assembled;
	m->binary = s->binary;
	if (s->tail)
		s->tail->next = m;
	else
		s->head = m;
	s->tail = m;
	lws_callback_on_writable(wsi);
	return 0;
}

static int
write_next(struct lws *wsi, struct session *s)
{
	struct message *m = s->head;

	if (!m)
		return 0;
	if (lws_write(wsi, m->payload + LWS_PRE, m->length,
		      m->binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT) < (int)m->length)
		return -1;
	s->head = m->next;
	if (!s->head)
		s->tail = NULL;
	free(m->payload);
	free(m);
	if (s->head)
		lws_callback_on_writable(wsi);
	return 0;
}

static int
callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
	struct session *s = (struct session *)user;
	unsigned char headers[LWS_PRE + 256], *start = headers + LWS_PRE, *p = start,
		      *end = headers + sizeof(headers) - 1;
	unsigned char body[LWS_PRE + 2];

	switch (reason) {
	case LWS_CALLBACK_HTTP:
		if (lws_add_http_common_headers(wsi, HTTP_STATUS_OK, "text/plain", 2, &p, end) ||
		    lws_finalize_write_http_header(wsi, start, &p, end))
			return 1;
		lws_callback_on_writable(wsi);
		return 0;

	case LWS_CALLBACK_HTTP_WRITEABLE:
		memcpy(body + LWS_PRE, "ok", 2);
		if (lws_write(wsi, body + LWS_PRE, 2, LWS_WRITE_HTTP_FINAL) != 2)
			return 1;
		return lws_http_transaction_completed(wsi) ? -1 : 0;

	case LWS_CALLBACK_ESTABLISHED:
		memset(s, 0, sizeof(*s));
		return 0;

	case LWS_CALLBACK_RECEIVE:
		return receive(wsi, s, in, len);

	case LWS_CALLBACK_SERVER_WRITEABLE:
		return write_next(wsi, s);

	case LWS_CALLBACK_CLOSED:
		free_session(s);
		return 0;

	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

static const struct lws_protocols protocols[] = {
	{ "raw-bench", callback, sizeof(struct session), 64 * 1024, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static void
on_signal(int signal_number)
{
	(void)signal_number;
	stopping = 1;
	if (context)
		lws_cancel_service(context);
}

static void
on_stop_signal(struct ev_loop *loop, ev_signal *watcher, int revents)
{
	(void)watcher;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

int
main(int argc, char **argv)
{
	struct lws_context_creation_info info;
	struct lws_vhost *vhost;
	struct ev_loop *loop = NULL;
	void *foreign_loops[1];
	ev_signal term_watcher, int_watcher;
	int use_poll = argc > 1 && strcmp(argv[1], "--poll") == 0;

	sigset_t stop_signals;

	lws_set_log_level(LLL_ERR, NULL);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	/* A parent thread may have blocked signals, and children inherit the mask. */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGINT);
	sigprocmask(SIG_UNBLOCK, &stop_signals, NULL);

	memset(&info, 0, sizeof(info));
	info.port = 0;
	info.iface = "127.0.0.1";
	info.vhost_name = "raw";
	info.protocols = protocols;
	info.options = LWS_SERVER_OPTION_DISABLE_IPV6 | LWS_SERVER_OPTION_VALIDATE_UTF8;
	info.pt_serv_buf_size = 64 * 1024;
	info.max_http_header_pool = 256;
	info.keepalive_timeout = 15;
	if (!use_poll) {
		loop = ev_loop_new(EVFLAG_AUTO | EVFLAG_NOSIGMASK);
		if (!loop) {
			fprintf(stderr, "raw_lws_server: cannot create the libev loop\n");
			return 1;
		}
		foreign_loops[0] = loop;
		info.options |= LWS_SERVER_OPTION_LIBEV;
		info.foreign_loops = foreign_loops;
	}

	context = lws_create_context(&info);
	if (!context) {
		fprintf(stderr, "raw_lws_server: cannot create the context\n");
		return 1;
	}
	vhost = lws_get_vhost_by_name(context, "raw");
	printf("PORT %d\n", vhost ? lws_get_vhost_listen_port(vhost) : 0);
	fflush(stdout);

	if (loop) {
		ev_signal_init(&term_watcher, on_stop_signal, SIGTERM);
		ev_signal_start(loop, &term_watcher);
		ev_signal_init(&int_watcher, on_stop_signal, SIGINT);
		ev_signal_start(loop, &int_watcher);
		ev_run(loop, 0);
	} else {
		while (!stopping)
			if (lws_service(context, 0) < 0)
				break;
	}

	lws_context_destroy(context);
	if (loop)
		ev_loop_destroy(loop);
	return 0;
}
