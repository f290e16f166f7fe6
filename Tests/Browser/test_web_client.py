"""Browser tests of the Parley web page: headless Chromium with a fake microphone playing
synthesised speech, against a real Parley server (in process with deterministic providers, or
`parley serve` on the embedded stack: Tests/ParleyServerTests/Browser*.swift). Settings: see
harness.py.

Run: PARLEY_URL=… PARLEY_SPEECH_WAV=… PARLEY_SPEECH_TEXT=… python -m unittest -v test_web_client
"""

import json
import os
import tempfile
import unittest
import urllib.request

from harness import Page, Settings, content_words, control_server, make_fake_microphone, wait_until

TURN_TIMEOUT = 60
# Received speech energy (level² × seconds) that proves a call's track brought the answer in:
# 10 ms at -20 dBFS. A silent track adds nothing.
CALL_SPEECH_ENERGY = 1e-4
# Strips the server's ICE candidates from every answer the page receives, so the call's
# connectivity checks have nowhere to go.
CALL_CANDIDATES_DROPPED = """
const setRemoteDescription = RTCPeerConnection.prototype.setRemoteDescription;
RTCPeerConnection.prototype.setRemoteDescription = function (description) {
  const sdp = description.sdp.split("\\r\\n").filter((line) => !line.startsWith("a=candidate:")).join("\\r\\n");
  return setRemoteDescription.call(this, { type: description.type, sdp });
};
"""
LONG_ANSWER_REQUEST = "Tell me a long story about a dragon who learns to bake bread."


class WebClientTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.settings = Settings.from_environment()
        cls.scratch = tempfile.TemporaryDirectory()
        cls.talk_microphone = make_fake_microphone(cls.settings.speech_wav, 2.5, cls.scratch.name)
        cls.hands_free_microphone = make_fake_microphone(cls.settings.speech_wav, 8, cls.scratch.name)
        # Pauses shorter than any end of turn (server_vad's 500 ms silence, the 200 ms after which
        # semantic_vad judges a pause): the talker who interrupts keeps talking, so no new answer
        # plays while a test checks the interrupted one is silent.
        cls.barge_in_microphone = make_fake_microphone(cls.settings.speech_wav, 0.1, cls.scratch.name)

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def open_page(self, **options):
        page = Page(self.settings, **options)
        self.addCleanup(page.close)
        return page

    def save_screenshot(self, page, name):
        page.screenshot(self.settings.artifacts / f"{self.settings.screenshot_prefix}{name}.png")

    # Assertions

    def assert_heard_the_speech(self, text):
        expected = content_words(self.settings.speech_text)
        heard = set(content_words(text))
        found = [word for word in expected if word in heard]
        self.assertGreaterEqual(
            len(found), max(1, round(len(expected) * 2 / 3)),
            f"the user bubble {text!r} should hold most of the spoken words {expected}")

    def assert_heard_the_tone_through_the_call(self, text):
        """On a WebRTC call the microphone goes through the browser's audio processing and Opus,
        then the server's Opus decoding: none of them moves the pitch, so the 500 Hz tone is heard
        as exactly 500 (to the recogniser's 10 Hz), as on the WebSocket."""
        expected = self.settings.speech_text.strip()
        if not expected.isdigit():
            self.assert_heard_the_speech(text)
            return
        self.assertEqual(expected, text.strip(), "the tone's pitch heard through the call")

    def assert_agent_spoke(self, page, message):
        self.assertNotEqual(message.heard.strip() or message.text.strip(), "", "the agent bubble has text")
        # The answer's text can be complete before its first chunk of speech has finished playing.
        if page.debug()["transport"] == "webrtc":
            wait_until(lambda: (page.call_audio() or {}).get("energy", 0) > CALL_SPEECH_ENERGY,
                       TURN_TIMEOUT, "agent speech to arrive on the call's track")
            wait_until(lambda: "speaking" in page.status_history(), TURN_TIMEOUT, "the page to show the agent speaking")
            return
        wait_until(lambda: page.debug()["audioChunksPlayed"] > 0 and page.debug()["samplesPlayed"] > 0,
                   TURN_TIMEOUT, "agent audio to be played")

    def assert_no_error_notices(self, page):
        errors = [text for text in page.notices() if text]
        self.assertEqual([], [text for text in errors if "error" in text.lower() or "failed" in text.lower()])

    def assert_no_page_errors(self, page):
        self.assertEqual([], page.browser_errors(), "the browser console shows no errors")

    def wait_not_capturing(self, page, within=0.25):
        wait_until(lambda: not page.debug()["capturing"], within, "the microphone gate to close")

    def wait_for_user_message(self, page, index, timeout=TURN_TIMEOUT):
        def final():
            users = page.messages("user")
            return users[index] if len(users) > index and users[index].state == "done" else None
        return wait_until(final, timeout, f"user message {index + 1} with its final transcript")

    # Tests

    def test_hold_to_talk_turn_with_pointer_then_space_bar(self):
        """Forced onto the WebSocket: the page captures, resamples and sends the audio itself, and
        the tone's exact pitch proves it did so at the right rates."""
        page = self.open_page(microphone=self.talk_microphone, query="?transport=websocket")
        page.wait_ready()
        self.assertEqual("websocket", page.debug()["transport"])
        self.hold_to_talk_turns(page, self.assert_heard_the_speech)

    def test_hold_to_talk_turn_over_webrtc_with_pointer_then_space_bar(self):
        page = self.open_page(microphone=self.talk_microphone)
        page.wait_ready()
        wait_until(lambda: page.debug()["transport"] == "webrtc", 20, "the page to talk over a WebRTC call by default")
        self.hold_to_talk_turns(page, self.assert_heard_the_tone_through_the_call)
        self.assertEqual(0, page.debug()["chunksSent"], "the microphone went on the track, not in events")

    def hold_to_talk_turns(self, page, assert_heard):
        after_release = page.hold_through_one_utterance()
        self.assertFalse(after_release["holding"])
        self.wait_not_capturing(page)
        self.assertLess(after_release["pressAudioMissedMs"], 17, "capture starts within a frame of the press")
        self.assertIn("listening", page.status_history())

        user = self.wait_for_user_message(page, 0)
        assert_heard(user.text)
        agent = page.wait_for_agent_answer(0)
        self.assert_agent_spoke(page, agent)
        wait_until(lambda: page.status() == "ready", TURN_TIMEOUT, "the page to be ready again")
        history = page.status_history()
        for state in ("listening", "thinking", "speaking", "ready"):
            self.assertIn(state, history)
        self.assertLess(history.index("listening"), history.index("speaking"))

        page.driver.find_element("css selector", "body").click()
        page.hold_through_one_utterance(press=page.space_down, release=page.space_up)
        self.wait_not_capturing(page)
        second_user = self.wait_for_user_message(page, 1)
        assert_heard(second_user.text)
        page.wait_for_agent_answer(1)
        self.assert_no_error_notices(page)
        self.assert_no_page_errors(page)
        self.save_screenshot(page, "hold-to-talk")

    @unittest.skipUnless(os.environ.get("PARLEY_EXPECT_ENGINES"), "the server's engines are named by the embedded-stack run")
    def test_page_names_the_engines(self):
        page = self.open_page(microphone=self.talk_microphone)
        page.wait_ready()
        line = page.by_test_id("engines")
        wait_until(lambda: line.is_displayed() and line.text, 30, "the engines line")
        for name in os.environ["PARLEY_EXPECT_ENGINES"].split(","):
            self.assertIn(name, line.text)
        self.assertIn("tiny demo model", line.text)
        # Each engine that says its languages is shown with them: named when few, counted when many.
        status = json.load(urllib.request.urlopen(self.settings.url + "v1/status", timeout=10))
        for engine in status["providers"]:
            languages = engine.get("languages") or []
            if engine["role"] in ("speech-to-text", "text-to-speech") and languages:
                said = ", ".join(languages) if len(languages) <= 4 else f"{len(languages)} languages"
                self.assertIn(f"{engine['name']} ({said})", line.text)
                self.assertIn(f"{engine['name']}: {', '.join(languages)}", line.get_attribute("title"))
        self.assert_no_page_errors(page)

    def test_quick_tap_settles_silently_and_leaves_no_open_microphone(self):
        page = self.open_page(microphone=self.talk_microphone)
        page.wait_ready()
        page.tap_talk()
        # On a call the press also clears the silence the track carried before it; the tap's own
        # clear is the one after.
        clears = 2 if page.debug()["transport"] == "webrtc" else 1
        wait_until(lambda: page.debug()["eventCounts"].get("input_audio_buffer.cleared", 0) >= clears, 10,
                   "the server to confirm the tap's audio was cleared")
        snapshot = page.debug()
        self.assertFalse(snapshot["capturing"])
        self.assertFalse(snapshot["holding"])
        self.assertEqual(0, snapshot["eventCounts"].get("input_audio_buffer.committed", 0))
        self.assertEqual([], page.messages())
        self.assertEqual("ready", page.status())
        self.assertEqual([], page.notices())

    def test_typed_turn_is_answered_in_speech(self):
        page = self.open_page(microphone=self.talk_microphone)
        page.wait_ready()
        page.type_message("What is two plus three?")
        users = page.messages("user")
        self.assertEqual(1, len(users))
        self.assertEqual("What is two plus three?", users[0].text)
        self.assertEqual("", page.by_test_id("composer").get_attribute("value"))
        agent = page.wait_for_agent_answer(0)
        self.assert_agent_spoke(page, agent)
        self.assert_no_error_notices(page)
        self.assert_no_page_errors(page)

    def test_hands_free_turn(self):
        page = self.open_page(microphone=self.hands_free_microphone)
        page.wait_ready()
        page.wait_until_next_utterance_is_near()
        page.by_test_id("handsfree").click()
        self.assertEqual("true", page.by_test_id("handsfree").get_attribute("aria-checked"))
        self.assertEqual("hands-free", page.debug()["mode"])
        # semantic_vad when the server has a turn model, else server_vad (the server refuses
        # semantic_vad and the page falls back without an error notice).
        expected = os.environ.get("PARLEY_HANDS_FREE_TURN_DETECTION")
        if expected:
            wait_until(lambda: page.debug()["turnDetection"] == expected, 10, f"the server to confirm {expected}")

        user = self.wait_for_user_message(page, 0)
        self.assert_heard_the_speech(user.text)
        agent = page.wait_for_agent_answer(0)
        self.assert_agent_spoke(page, agent)
        self.assertIn("listening", page.status_history())

        page.by_test_id("handsfree").click()
        self.wait_not_capturing(page)
        self.assertEqual("hold-to-talk", page.debug()["mode"])
        self.assert_no_error_notices(page)
        self.assert_no_page_errors(page)

    def test_hands_free_and_hold_to_talk_turns_over_webrtc(self):
        page = self.open_page(microphone=self.hands_free_microphone)
        page.wait_ready()
        wait_until(lambda: page.debug()["transport"] == "webrtc", 20, "the page to talk over a WebRTC call by default")
        page.wait_until_next_utterance_is_near()
        page.by_test_id("handsfree").click()
        user = self.wait_for_user_message(page, 0)
        self.assert_heard_the_tone_through_the_call(user.text)
        agent = page.wait_for_agent_answer(0)
        self.assertNotEqual("", agent.text.strip(), "the answer's subtitles")
        wait_until(lambda: "speaking" in page.status_history(), TURN_TIMEOUT, "the call's speech to play")
        self.assertEqual(0, page.debug()["chunksSent"], "the microphone went on the track, not in events")
        page.by_test_id("handsfree").click()
        self.wait_not_capturing(page)
        wait_until(lambda: page.status() == "ready", TURN_TIMEOUT, "the page to be ready again")
        page.hold_through_one_utterance()
        second = self.wait_for_user_message(page, 1)
        self.assert_heard_the_tone_through_the_call(second.text)
        page.wait_for_agent_answer(1)
        self.assertEqual("webrtc", page.debug()["transport"])
        self.assert_no_error_notices(page)
        self.assert_no_page_errors(page)

    def test_falls_back_to_the_websocket_when_webrtc_is_missing_or_blocked(self):
        for what, script in (
            ("a browser without WebRTC", "delete window.RTCPeerConnection;"),
            # The server answers the call, but no path to it is ever found: as when a firewall
            # drops UDP, the call never opens.
            ("a call whose packets never get through", CALL_CANDIDATES_DROPPED),
        ):
            with self.subTest(what):
                page = self.open_page(microphone=self.talk_microphone, before_page_script=script)
                page.wait_ready(timeout=45)
                self.assertEqual("websocket", page.debug()["transport"])
                page.type_message("Can you hear me?")
                agent = page.wait_for_agent_answer(0)
                self.assert_agent_spoke(page, agent)
                self.assert_no_error_notices(page)

    def test_talking_over_the_agent_interrupts_it(self):
        page = self.open_page(microphone=self.barge_in_microphone)
        page.wait_ready()
        page.type_message(LONG_ANSWER_REQUEST)
        wait_until(lambda: page.debug()["playing"], TURN_TIMEOUT, "the agent to start speaking")
        page.by_test_id("handsfree").click()

        agent = page.wait_for_agent_answer(0, timeout=30, states=("interrupted",))
        truncate = page.debug()["lastTruncate"]
        self.assertEqual("vad", truncate["reason"])
        self.assertGreater(truncate["audioEndMs"], 0)
        self.assert_playback_stopped(page)
        wait_until(lambda: page.debug()["eventCounts"].get("conversation.item.truncated", 0) >= 1, 10,
                   "the server to confirm the truncation")
        self.assertIn("interrupted", agent.text)
        self.save_screenshot(page, "interrupted-by-talking")
        page.by_test_id("handsfree").click()
        self.wait_not_capturing(page)

    def test_pressing_talk_interrupts_the_agent(self):
        page = self.open_page(microphone=self.talk_microphone)
        page.wait_ready()
        page.type_message(LONG_ANSWER_REQUEST)
        wait_until(lambda: page.debug()["playing"], TURN_TIMEOUT, "the agent to start speaking")
        page.press_talk()
        wait_until(lambda: not page.debug()["playing"], 0.25, "playback to stop on the press")
        self.assertEqual("listening", page.status())
        page.wait_for_agent_answer(0, timeout=10, states=("interrupted",))
        truncate = page.debug()["lastTruncate"]
        self.assertEqual("hold", truncate["reason"])
        self.assertGreater(truncate["audioEndMs"], 0)
        wait_until(lambda: page.debug()["eventCounts"].get("response.done", 0) >= 1, 10,
                   "the cancelled response to end")
        self.assert_playback_stopped(page)
        page.release_talk()
        self.wait_not_capturing(page)
        self.assert_no_page_errors(page)

    def assert_playback_stopped(self, page):
        self.assertFalse(page.debug()["playing"])
        if page.debug()["transport"] == "webrtc":
            # The speech plays from the call's track: what the browser's jitter buffer held when
            # the server cut it may still come out, then the track stays silent.
            page.wait_for_mic_clock(page.debug()["micSeconds"] + 0.25)
            received = page.call_audio()["energy"]
            self.assertGreater(received, CALL_SPEECH_ENERGY, "the answer's speech came in before it was cut")
            page.wait_for_mic_clock(page.debug()["micSeconds"] + 0.5)
            self.assertLess(page.call_audio()["energy"] - received, received * 0.05,
                            "no audio of the interrupted answer plays on")
            self.assertFalse(page.debug()["playing"])
            return
        played = page.debug()["samplesPlayed"]
        page.wait_for_mic_clock(page.debug()["micSeconds"] + 0.5)
        self.assertEqual(played, page.debug()["samplesPlayed"], "no audio of the interrupted answer plays on")

    def test_microphone_denied_explains_and_typing_still_works(self):
        page = self.open_page(deny_microphone=True)
        wait_until(lambda: page.debug() and page.debug()["microphone"] == "failed", 15, "the microphone to be refused")
        self.assertEqual("denied", page.debug()["microphoneProblem"])
        help_panel = page.driver.find_element("id", "mic-help")
        self.assertTrue(help_panel.is_displayed())
        self.assertIn("Allow", help_panel.text)
        self.assertIn("Typing keeps working", help_panel.text)
        talk = page.by_test_id("talk")
        self.assertEqual("true", talk.get_attribute("aria-disabled"))
        page.wait_ready(microphone=False)
        page.tap_talk()
        self.assertFalse(page.debug()["capturing"])

        page.type_message("Hello, can you hear me?")
        agent = page.wait_for_agent_answer(0)
        self.assertNotEqual("", agent.text.strip())
        self.save_screenshot(page, "microphone-denied")

    def test_reconnects_after_the_server_restarts(self):
        if not self.settings.can_restart_server:
            self.skipTest("needs PARLEY_CONTROL=stdio (a supervisor that restarts the server)")
        page = self.open_page(microphone=self.talk_microphone)
        page.wait_ready()
        control_server("stop-server")
        wait_until(lambda: page.status() in ("offline", "connecting"), 10, "the page to notice the server is gone")
        wait_until(lambda: page.status() == "offline", 15, "the page to wait before retrying")
        banner = page.driver.find_element("id", "banner")
        self.assertTrue(banner.is_displayed())
        self.assertRegex(banner.text, r"(Reconnecting|Retrying) in \d+ s")
        self.assertIn("Lost the connection to Parley.", page.notices())

        control_server("start-server")
        page.wait_ready(timeout=60)
        self.assertFalse(banner.is_displayed())
        self.assertIn("Reconnected to Parley.", page.notices())
        page.type_message("Are you back?")
        agent = page.wait_for_agent_answer(0)
        self.assertNotEqual("", agent.text.strip())

    def test_conversation_screenshots_light_desktop_and_dark_phone(self):
        for name, options in (
            ("conversation-light-desktop", {"size": (1100, 800)}),
            ("conversation-dark-phone", {"size": (390, 844), "dark": True}),
        ):
            page = self.open_page(microphone=self.talk_microphone, **options)
            page.wait_ready()
            page.type_message("What time is it?")
            page.wait_for_agent_answer(0)
            self.assertTrue(page.by_test_id("talk").is_displayed())
            self.assertTrue(page.by_test_id("composer").is_displayed())
            self.save_screenshot(page, name)
            self.assert_no_page_errors(page)


if __name__ == "__main__":
    unittest.main(verbosity=2)
