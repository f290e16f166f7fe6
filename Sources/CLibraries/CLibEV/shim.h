#ifndef PARLEY_CLIBEV_SHIM_H
#define PARLEY_CLIBEV_SHIM_H
#include <ev.h>

/* libev's watcher set-up is macros, which Swift cannot call: these wrap the few ParleyNet uses. */

/* A wake-up needs no work of its own: interrupting the loop's wait is the point. */
static inline void parley_ev_wake_callback(struct ev_loop *loop, ev_async *watcher, int events) {
    (void)loop;
    (void)watcher;
    (void)events;
}

/* A new loop on the platform's best backend (epoll, kqueue) that leaves signals alone. */
static inline struct ev_loop *parley_ev_loop_new(void) {
    return ev_loop_new(EVFLAG_AUTO | EVFLAG_NOSIGMASK);
}

/* Starts `watcher` as the loop's wake-up: `ev_async_send` from any thread ends a wait. */
static inline void parley_ev_wake_start(struct ev_loop *loop, ev_async *watcher) {
    ev_async_init(watcher, parley_ev_wake_callback);
    ev_async_start(loop, watcher);
}

/* Runs one iteration: waits for an event (or not, with `wait` 0) and handles what is ready. */
static inline void parley_ev_run_once(struct ev_loop *loop, int wait) {
    ev_run(loop, wait ? EVRUN_ONCE : EVRUN_NOWAIT);
}
#endif
