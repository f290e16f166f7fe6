"""The headline's own logic: where each figure comes from, and the rows no run has measured."""

import unittest

import headline
import write_report

CONVERSATION_P50 = ("conversation: last voiced sample (> -36 dBFS) sent -> first response.output_audio.delta received, "
                    "10 turns in one session (history kept), different questions, 2 flite voices (slt, rms), Silero VAD, "
                    "300 ms silence, preemptive transcription and generation on (defaults), p50")


def figure(area, name, value, unit="ms", target="", verdict="-"):
    return {"area": area, "name": name, "value": value, "unit": unit, "target": target, "verdict": verdict}


class HeadlineTests(unittest.TestCase):
    def lines(self, figures, kept_sections=None, kept_commits=None):
        return headline.headline_lines(
            figures, kept_sections or {}, "abc1234", kept_commits or {}, write_report.value_cell, write_report.verdict_cell)

    def row(self, lines, label_start):
        return next(line for line in lines if line.startswith(f"| {label_start}"))

    def test_a_figure_of_this_run_shows_its_value_target_verdict_and_this_commit(self):
        lines = self.lines([figure("conversation", CONVERSATION_P50, 733, target="<= 700 ms", verdict="MISS")])
        self.assertEqual(
            "| Voice to voice with `server_vad`, p50 (embedded stack, defaults, ten different spoken questions in one "
            "conversation) | 733 ms | <= 700 ms | **MISS** | `abc1234` |",
            self.row(lines, "Voice to voice with `server_vad`, p50"))

    def test_a_figure_kept_from_an_earlier_run_names_that_runs_commit(self):
        lines = self.lines([figure("conversation", CONVERSATION_P50, 650, target="<= 700 ms", verdict="pass")],
                           kept_commits={"conversation": "0ld0001"})
        self.assertTrue(self.row(lines, "Voice to voice with `server_vad`, p50").endswith("| 650 ms | <= 700 ms | pass | `0ld0001` |"))

    def test_a_figure_from_a_kept_section_keeps_its_text_and_names_its_commit(self):
        section = {"info": {"commit": "5ec7107", "started": "2026-12-01"}, "body": [
            "| figure | value | target | result |",
            "|---|---:|---|---|",
            "| Twilio call voice-to-voice, embedded stack: end of caller speech → first agent media (p50) | 791 ms |  |  |",
        ]}
        lines = self.lines([], kept_sections={"telephony": section})
        self.assertEqual(
            "| A phone call's voice to voice, p50 (Twilio Media Streams, embedded stack, ten different spoken questions in one call) | 791 ms |  |  | `5ec7107` |",
            self.row(lines, "A phone call's voice to voice"))

    def test_the_load_each_shown_runs_began_with_is_said(self):
        section = {"info": {"commit": "5ec7107", "started": "2026-12-01", "load_average": "0.10 0.20 0.30"}, "body": [
            "| Twilio call voice-to-voice, embedded stack: end of caller speech → first agent media (p50) | 791 ms |  |  |",
        ]}
        lines = headline.headline_lines(
            [figure("conversation", CONVERSATION_P50, 650)], {"telephony": section}, "abc1234", {},
            write_report.value_cell, write_report.verdict_cell, {"abc1234": "1.24 1.39 2.37"})
        load_line = next(line for line in lines if line.startswith("Load average"))
        self.assertIn("`abc1234` 1.24 1.39 2.37; `5ec7107` 0.10 0.20 0.30.", load_line)

    def test_the_defaults_capacity_rows_take_only_figures_held_to_the_upstreams_own_bound(self):
        bound = ("p99 ≤ 3068 ms (the upstream's own path to first audio 2268 ms + the 300 ms silence window + 500 ms)")
        defaults = ("defaults (Silero VAD, 300 ms silence, preemption on, hosted-stack upstream (GPT-4.1 mini's published "
                    "rates, a 3-sentence reply spoken at 150 words/min), a spoken question)")
        earlier = {"info": {"commit": "0ld0001", "started": "2026-12-01"}, "body": [
            "| Twilio concurrent calls, defaults (Silero VAD, 300 ms silence, preemption on, realistic upstream, a spoken "
            "question): every call answered, p99 ≤ 1000 ms | 40 calls held |  |  |",
        ]}
        lines = self.lines([
            figure("server", "defaults (Silero VAD, 300 ms silence, preemption on, hosted-stack upstream (GPT-4.1 mini's "
                   "published rates, a 3-sentence reply spoken at 150 words/min)): concurrent sessions (every turn answered, "
                   f"{bound}, timed last voiced chunk sent -> first audio delta received)", 120, unit="sessions"),
            figure("webrtc", f"concurrent calls, {defaults}, server and peers, each asking the question once every 23 s; "
                   f"held: every turn answered, voice-to-voice {bound}", 30, unit="calls"),
        ], kept_sections={"telephony": earlier})
        self.assertIn("| `abc1234` |", self.row(lines, "Sessions one server holds"))
        self.assertIn("| `abc1234` |", self.row(lines, "WebRTC calls one server holds"))
        self.assertIn("not measured yet", self.row(lines, "Phone calls one server holds"))

    def test_a_figure_no_run_measured_says_so(self):
        lines = self.lines([])
        self.assertIn("not measured yet", self.row(lines, "WebRTC calls one server holds"))

    def test_at_most_ten_figures_each_in_one_row(self):
        rows = [line for line in self.lines([]) if line.startswith("| ") and not line.startswith("| what")]
        self.assertLessEqual(len(rows), 10)
        self.assertEqual(len(headline.HEADLINE), len(rows))


if __name__ == "__main__":
    unittest.main()
