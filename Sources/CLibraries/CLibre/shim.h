#ifndef PARLEY_CLIBRE_SHIM_H
#define PARLEY_CLIBRE_SHIM_H
/* libre's headers expect the feature macros its own build (re.mk) defines. */
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#define HAVE_INTTYPES_H 1
#define HAVE_STDBOOL_H 1
#define HAVE_INET6 1
#include <re.h>

/* libre's replies take printf-style header lists, which Swift cannot call: one shim each, the
   extra headers passed as one preformatted string ("Name: value\r\n" lines, or ""). */

/* A final or provisional reply through a server transaction of its own (retransmissions and
   the ACK of a failure are libre's). */
static inline int parley_sip_reply(struct sip *sip, const struct sip_msg *msg, uint16_t scode, const char *reason,
                                   const char *headers) {
    return sip_treplyf(NULL, NULL, sip, msg, true, scode, reason, "%sContent-Length: 0\r\n\r\n", headers);
}

static inline int parley_sipsess_accept(struct sipsess **sessp, struct sipsess_sock *sock, const struct sip_msg *msg,
                                        uint16_t scode, const char *reason, const char *cuser,
                                        sipsess_offer_h *offerh, sipsess_answer_h *answerh, sipsess_estab_h *estabh,
                                        sipsess_close_h *closeh, void *arg, const char *headers) {
    return sipsess_accept(sessp, sock, msg, scode, reason, cuser, "application/sdp", NULL, NULL, NULL, false,
                          offerh, answerh, estabh, NULL, NULL, closeh, arg, "%s", headers);
}

/* An outgoing call: INVITE to `to_uri` with the offer `desc`, through `route` (a loose route, or NULL). */
static inline int parley_sipsess_connect(struct sipsess **sessp, struct sipsess_sock *sock, const char *to_uri,
                                         const char *from_name, const char *from_uri, const char *cuser, const char *route,
                                         struct mbuf *desc, sip_auth_h *authh, void *aarg, sipsess_offer_h *offerh,
                                         sipsess_answer_h *answerh, sipsess_progr_h *progrh, sipsess_estab_h *estabh,
                                         sipsess_close_h *closeh, void *arg, const char *headers) {
    const char *routev[1] = {route};
    return sipsess_connect(sessp, sock, to_uri, from_name, from_uri, cuser, route ? routev : NULL, route ? 1 : 0,
                           "application/sdp", desc, authh, aarg, false, offerh, answerh, progrh, estabh, NULL, NULL,
                           closeh, arg, "%s", headers);
}

static inline int parley_sipsess_answer(struct sipsess *sess, uint16_t scode, const char *reason, struct mbuf *desc,
                                        const char *headers) {
    return sipsess_answer(sess, scode, reason, desc, "%s", headers);
}

static inline int parley_sipsess_reject(struct sipsess *sess, uint16_t scode, const char *reason, const char *headers) {
    return sipsess_reject(sess, scode, reason, "%s", headers);
}

/* A blind transfer: REFER to `target` (a SIP URI) in the session's dialog, its NOTIFYs to `notifyh`. */
static inline int parley_sipevent_drefer(struct sipsub **subp, struct sipevent_sock *sock, struct sip_dialog *dlg,
                                         sipsub_notify_h *notifyh, sipsub_close_h *closeh, void *arg, const char *target) {
    return sipevent_drefer(subp, sock, dlg, "parley", NULL, NULL, false, notifyh, closeh, arg, "Refer-To: <%s>\r\n", target);
}

static inline int parley_sip_transp_add(struct sip *sip, enum sip_transp tp, const struct sa *laddr) {
    return sip_transp_add(sip, tp, laddr);
}

/* A format of an SDP media line, `params` its fmtp (or NULL). */
static inline int parley_sdp_format_add(struct sdp_media *m, const char *id, const char *name, uint32_t srate, uint8_t ch,
                                        const char *params) {
    if (params) return sdp_format_add(NULL, m, false, id, name, srate, ch, NULL, NULL, NULL, false, "%s", params);
    return sdp_format_add(NULL, m, false, id, name, srate, ch, NULL, NULL, NULL, false, NULL);
}
#endif
