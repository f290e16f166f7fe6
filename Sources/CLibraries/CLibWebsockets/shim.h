#ifndef PARLEY_CLIBWEBSOCKETS_SHIM_H
#define PARLEY_CLIBWEBSOCKETS_SHIM_H
#include <libwebsockets.h>
#include <string.h>

/*
 * A timer that fires every second on a context's service thread, doing nothing else.
 *
 * lws 4.1's libev glue re-arms its one libev timer for the earliest lws deadline with
 * ev_timer_set while that timer is still running, which libev does not support: libev keeps
 * waiting for the deadline the timer had when it was started. A timeout set meanwhile (an
 * idle connection's, a slow client's, an unanswered ping's) then fires only when that older,
 * later deadline comes, seconds or minutes late. With this tick the older deadline is never
 * more than a second away, and when it comes lws re-arms its timer properly.
 */
struct parley_lws_tick {
    lws_sorted_usec_list_t sul;
    struct lws_context *context;
};

static inline void parley_lws_tick_fire(lws_sorted_usec_list_t *sul) {
    struct parley_lws_tick *tick = lws_container_of(sul, struct parley_lws_tick, sul);
    lws_sul_schedule(tick->context, 0, &tick->sul, parley_lws_tick_fire, LWS_US_PER_SEC);
}

/* Service thread: starts ticking on `context`. */
static inline void parley_lws_tick_start(struct parley_lws_tick *tick, struct lws_context *context) {
    memset(tick, 0, sizeof(*tick));
    tick->context = context;
    lws_sul_schedule(context, 0, &tick->sul, parley_lws_tick_fire, LWS_US_PER_SEC);
}

/* Service thread, before the context is destroyed: stops ticking. */
static inline void parley_lws_tick_stop(struct parley_lws_tick *tick) {
    lws_sul_cancel(&tick->sul);
}
#endif
