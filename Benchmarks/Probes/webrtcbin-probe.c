/* Probe (not product code): what a GStreamer webrtcbin call costs on this machine.
 *
 * Sets up N loopback calls in one process, each a pair of webrtcbins (an Opus sender and a
 * receiver that decodes), and prints threads added per call, resident memory per call, CPU
 * per call while audio flows (10 s), and the time from creating a call to its ICE state
 * 'connected'. Build and run with Benchmarks/Probes/run-webrtcbin-probe. */
#define GST_USE_UNSTABLE_API
#include <gst/gst.h>
#include <gst/webrtc/webrtc.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

typedef struct {
    GstElement *pipeline, *offerer, *answerer;
    gint64 started, connected_after;
} Call;

static int connected_calls;

static int thread_count(void) {
    int count = 0;
    DIR *tasks = opendir("/proc/self/task");
    for (struct dirent *entry; (entry = readdir(tasks));) if (entry->d_name[0] != '.') count++;
    closedir(tasks);
    return count;
}

static long rss_kb(void) {
    long kb = 0;
    char line[256];
    FILE *status = fopen("/proc/self/status", "r");
    while (fgets(line, sizeof line, status)) if (sscanf(line, "VmRSS: %ld", &kb) == 1) break;
    fclose(status);
    return kb;
}

static double cpu_seconds(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

static void answer_created(GstPromise *promise, gpointer data) {
    Call *call = data;
    GstWebRTCSessionDescription *answer = NULL;
    gst_structure_get(gst_promise_get_reply(promise), "answer", GST_TYPE_WEBRTC_SESSION_DESCRIPTION, &answer, NULL);
    gst_promise_unref(promise);
    g_signal_emit_by_name(call->answerer, "set-local-description", answer, NULL);
    g_signal_emit_by_name(call->offerer, "set-remote-description", answer, NULL);
    gst_webrtc_session_description_free(answer);
}

static void offer_created(GstPromise *promise, gpointer data) {
    Call *call = data;
    GstWebRTCSessionDescription *offer = NULL;
    gst_structure_get(gst_promise_get_reply(promise), "offer", GST_TYPE_WEBRTC_SESSION_DESCRIPTION, &offer, NULL);
    gst_promise_unref(promise);
    g_signal_emit_by_name(call->offerer, "set-local-description", offer, NULL);
    g_signal_emit_by_name(call->answerer, "set-remote-description", offer, NULL);
    gst_webrtc_session_description_free(offer);
    g_signal_emit_by_name(call->answerer, "create-answer", NULL, gst_promise_new_with_change_func(answer_created, call, NULL));
}

static void negotiation_needed(GstElement *element, gpointer data) {
    g_signal_emit_by_name(element, "create-offer", NULL, gst_promise_new_with_change_func(offer_created, data, NULL));
}

static void candidate_for_answerer(GstElement *element, guint index, gchar *candidate, gpointer data) {
    g_signal_emit_by_name(((Call *)data)->answerer, "add-ice-candidate", index, candidate);
}

static void candidate_for_offerer(GstElement *element, guint index, gchar *candidate, gpointer data) {
    g_signal_emit_by_name(((Call *)data)->offerer, "add-ice-candidate", index, candidate);
}

static void pad_added(GstElement *element, GstPad *pad, gpointer data) {
    Call *call = data;
    if (GST_PAD_DIRECTION(pad) != GST_PAD_SRC) return;
    GstElement *sink = gst_parse_bin_from_description("rtpopusdepay ! opusdec ! fakesink", TRUE, NULL);
    gst_bin_add(GST_BIN(call->pipeline), sink);
    gst_element_sync_state_with_parent(sink);
    GstPad *sink_pad = gst_element_get_static_pad(sink, "sink");
    gst_pad_link(pad, sink_pad);
    gst_object_unref(sink_pad);
}

static void ice_state(GstElement *element, GParamSpec *spec, gpointer data) {
    Call *call = data;
    GstWebRTCICEConnectionState state;
    g_object_get(element, "ice-connection-state", &state, NULL);
    if ((state == GST_WEBRTC_ICE_CONNECTION_STATE_CONNECTED || state == GST_WEBRTC_ICE_CONNECTION_STATE_COMPLETED)
        && call->connected_after == 0) {
        call->connected_after = g_get_monotonic_time() - call->started;
        g_atomic_int_inc(&connected_calls);
    }
}

static gboolean stop(gpointer loop) { g_main_loop_quit(loop); return G_SOURCE_REMOVE; }

int main(int argc, char **argv) {
    gst_init(&argc, &argv);
    int count = argc > 1 ? atoi(argv[1]) : 10;
    GMainLoop *loop = g_main_loop_new(NULL, FALSE);
    int base_threads = thread_count();
    long base_rss = rss_kb();
    Call *calls = calloc(count, sizeof *calls);
    for (int i = 0; i < count; i++) {
        Call *call = &calls[i];
        call->started = g_get_monotonic_time();
        call->pipeline = gst_parse_launch(
            "audiotestsrc is-live=true wave=sine ! audioconvert ! audioresample ! opusenc ! rtpopuspay ! "
            "application/x-rtp,media=audio,encoding-name=OPUS,clock-rate=48000,payload=111 ! "
            "webrtcbin name=offerer bundle-policy=max-bundle webrtcbin name=answerer bundle-policy=max-bundle", NULL);
        call->offerer = gst_bin_get_by_name(GST_BIN(call->pipeline), "offerer");
        call->answerer = gst_bin_get_by_name(GST_BIN(call->pipeline), "answerer");
        g_signal_connect(call->offerer, "on-negotiation-needed", G_CALLBACK(negotiation_needed), call);
        g_signal_connect(call->offerer, "on-ice-candidate", G_CALLBACK(candidate_for_answerer), call);
        g_signal_connect(call->answerer, "on-ice-candidate", G_CALLBACK(candidate_for_offerer), call);
        g_signal_connect(call->answerer, "pad-added", G_CALLBACK(pad_added), call);
        g_signal_connect(call->answerer, "notify::ice-connection-state", G_CALLBACK(ice_state), call);
        gst_element_set_state(call->pipeline, GST_STATE_PLAYING);
    }
    gint64 deadline = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
    while (g_atomic_int_get(&connected_calls) < count && g_get_monotonic_time() < deadline) { if (!g_main_context_iteration(NULL, FALSE)) g_usleep(1000); }
    if (connected_calls < count) { fprintf(stderr, "only %d of %d calls connected\n", connected_calls, count); return 1; }
    g_timeout_add_seconds(2, stop, loop);
    g_main_loop_run(loop);
    double cpu_before = cpu_seconds();
    gint64 wall_before = g_get_monotonic_time();
    g_timeout_add_seconds(10, stop, loop);
    g_main_loop_run(loop);
    double cpu = (cpu_seconds() - cpu_before) / ((g_get_monotonic_time() - wall_before) / 1e6);
    gint64 worst = 0, total = 0;
    for (int i = 0; i < count; i++) { total += calls[i].connected_after; if (calls[i].connected_after > worst) worst = calls[i].connected_after; }
    printf("webrtcbin calls=%d (each: sender+receiver webrtcbin, Opus 48 kHz, loopback)\n", count);
    printf("threads per call: %.1f\n", (double)(thread_count() - base_threads) / count);
    printf("memory per call: %.1f MiB RSS\n", (rss_kb() - base_rss) / 1024.0 / count);
    printf("CPU per call: %.2f%% of one core (both ends)\n", cpu / count * 100);
    printf("setup to ICE connected: mean %.0f ms, max %.0f ms\n", total / 1000.0 / count, worst / 1000.0);
    return 0;
}
