"""Browser tests of the Parley operator console (/console): headless Chromium against a real
Parley server (Tests/ParleyServerTests/ConsoleBrowserTests.swift starts it). A call made from the
web client shows live in the console and, once ended, with its transcript, waterfall and
recording; the player seeks by turn; an agent edited in the console answers differently; a
handoff and a filler are marked in a transcript found by what was said; a
client token opens neither the console nor its API.

Settings: those of harness.py, and
  PARLEY_CONSOLE_TOKEN    a console token of the server ('parley console-token')
  PARLEY_CLIENT_TOKEN     a client token of the server, which the console must refuse
  PARLEY_SCREENSHOTS_DIR  where the console-*.png screenshots of each view go (default: the artifacts)
"""

import json
import os
import tempfile
import unittest
import urllib.error
import urllib.request
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

from harness import Page, Settings, make_fake_microphone, wait_until

TIMEOUT = 60


class Console:
    """The console in its own headless Chromium, signed in with a token."""

    def __init__(self, settings, size=(1280, 900)):
        options = Options()
        options.binary_location = os.environ.get("PARLEY_CHROMIUM", "/usr/bin/chromium")
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         f"--window-size={size[0]},{size[1]}", "--autoplay-policy=no-user-gesture-required"):
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service(os.environ.get("PARLEY_CHROMEDRIVER", "/usr/bin/chromedriver")), options=options)
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": False})
        self.url = settings.url + "console"
        self.logged = []
        self.driver.get(self.url)

    def close(self):
        self.driver.quit()

    def find(self, selector):
        return self.driver.find_element(By.CSS_SELECTOR, selector)

    def find_all(self, selector):
        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def by_test_id(self, test_id):
        return self.find(f'[data-testid="{test_id}"]')

    def sign_in(self, token):
        field = self.by_test_id("token")
        field.clear()
        field.send_keys(token)
        self.find("#sign-in-form button[type=submit]").click()

    def go(self, hash_route):
        self.driver.execute_script("location.hash = arguments[0]", hash_route)

    def errors(self):
        self.logged += [entry["message"] for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE"]
        return list(self.logged)

    def wait(self, predicate, describe):
        """Waits for `predicate`; a failure says what the console showed and logged."""
        try:
            return wait_until(predicate, TIMEOUT, describe)
        except AssertionError as error:
            shown = self.find("main").text[:2000]
            raise AssertionError(f"{error}; the console shows {shown!r}, logs {self.errors()}") from None


def console_api(settings, path, token, method="GET", body=None):
    """Calls the console API; returns (status, JSON body)."""
    request = urllib.request.Request(
        settings.url + "v1/console" + path, method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


class ConsoleTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.settings = Settings.from_environment()
        cls.console_token = os.environ["PARLEY_CONSOLE_TOKEN"]
        cls.client_token = os.environ["PARLEY_CLIENT_TOKEN"]
        cls.screenshots = Path(os.environ.get("PARLEY_SCREENSHOTS_DIR", cls.settings.artifacts))
        cls.screenshots.mkdir(parents=True, exist_ok=True)
        cls.scratch = tempfile.TemporaryDirectory()
        cls.microphone = make_fake_microphone(cls.settings.speech_wav, 2.5, cls.scratch.name)
        cls.hands_free_microphone = make_fake_microphone(cls.settings.speech_wav, 8, cls.scratch.name)

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def open_console(self):
        console = Console(self.settings)
        self.addCleanup(console.close)
        console.sign_in(self.console_token)
        console.wait(lambda: console.find("#nav").is_displayed(), "the console to sign in")
        return console

    def open_web_client(self, agent_id, microphone=None):
        page = Page(self.settings, microphone=microphone or self.microphone, query=f"?transport=websocket&agent={agent_id}")
        self.addCleanup(page.close)
        page.wait_ready()
        return page

    def create_agent(self, name, instructions):
        status, agent = console_api(self.settings, "/agents", self.console_token, "POST",
                                    {"name": name, "instructions": instructions, "recordings": True})
        self.assertEqual(201, status, agent)
        return agent["id"]

    def screenshot(self, console, view):
        console.driver.save_screenshot(str(self.screenshots / f"console-{view}.png"))

    def test_a_client_token_opens_neither_the_console_nor_its_api(self):
        for path in ("/sessions", "/calls", "/stats", "/agents", "/conversations/conv_x"):
            status, body = console_api(self.settings, path, self.client_token)
            self.assertEqual(403, status, path)
            self.assertEqual("forbidden", body["error"]["code"])
        console = Console(self.settings)
        self.addCleanup(console.close)
        console.sign_in(self.client_token)
        console.wait(lambda: "client tokens cannot open it" in console.find("#sign-in-error").text, "the console to refuse the client token")
        self.assertFalse(console.find("#nav").is_displayed())
        self.assertIsNone(console.driver.execute_script("return sessionStorage.getItem('parley-console-token')"))
        self.screenshot(console, "sign-in")

    def test_a_call_shows_live_then_with_transcript_waterfall_and_recording(self):
        agent_id = self.create_agent("Front desk", "Say: Good morning from the front desk.")
        page = self.open_web_client(agent_id, self.hands_free_microphone)
        console = self.open_console()

        # Live: the call appears while it runs, on its door, with its state. Hands-free, so the
        # server's turn detector ends the turn (its silence window and wait are in the waterfall).
        page.wait_until_next_utterance_is_near()
        page.by_test_id("handsfree").click()
        # The table is redrawn every two seconds: read it in one script.
        live_rows = lambda: console.driver.execute_script("""
            return [...document.querySelectorAll('[data-testid="live-sessions"] tr[data-session]')].map((row) => ({
              text: row.textContent, state: row.querySelector('[data-testid="state"]').textContent }));""")
        console.wait(live_rows, "the call to show live")
        row = live_rows()[0]
        self.assertIn("websocket", row["text"])
        self.assertIn(agent_id, row["text"])
        self.assertIn(row["state"], ("listening", "thinking", "speaking"))
        answer = page.wait_for_agent_answer(0)
        self.assertIn("Good morning", answer.text)
        console.wait(lambda: live_rows() and live_rows()[0]["state"] == "listening", "the state to follow the call")
        self.screenshot(console, "live")

        # The call ends: it leaves the live list and shows among the conversations.
        page.close()
        console.wait(lambda: not live_rows(), "the call to leave the live list")
        console.go("#calls")
        console.wait(lambda: console.find_all('[data-testid="calls"] tbody a'), "the call to be listed")
        first = console.find('[data-testid="calls"] tbody tr')
        self.assertIn("websocket", first.text)
        self.screenshot(console, "conversations")

        # The conversation: the transcript as the caller heard it, the turn's waterfall, the recording.
        first.find_element(By.CSS_SELECTOR, "a").click()
        console.wait(lambda: console.find_all('[data-testid="exchange"]'), "the transcript")
        transcript = console.by_test_id("transcript").text
        self.assertIn(self.settings.speech_text, transcript)
        self.assertIn("Good morning from the front desk.", transcript)
        waterfall = console.by_test_id("waterfall")
        labels = waterfall.get_attribute("aria-label")
        for stage in ("Silence window", "Detector wait", "Transcript", "First token", "First audio"):
            self.assertIn(stage, labels)
        self.assertGreaterEqual(len(waterfall.find_elements(By.CSS_SELECTOR, "rect")), 5)
        console.wait(lambda: console.find_all('[data-testid="waveform"]'), "the recording's waveforms")
        # Both channels are drawn: the caller's lane and the agent's lane each have ink.
        inked = console.driver.execute_script("""
            const canvas = document.querySelector('[data-testid="waveform"]');
            const context = canvas.getContext('2d');
            const lane = (top) => { const pixels = context.getImageData(0, top, canvas.width, canvas.height / 2).data;
              let count = 0; for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) count++; return count; };
            return [lane(0), lane(canvas.height / 2)];""")
        self.assertTrue(all(count > 200 for count in inked), f"ink per lane {inked}")
        self.screenshot(console, "conversation")

        # Seeking by turn: the player jumps to the turn and the transcript marks it.
        recording_ms = float(console.find('[data-testid="exchange"]').get_attribute("data-recording-ms"))
        console.by_test_id("seek").click()
        console.wait(lambda: console.find('[data-testid="exchange"]').get_attribute("aria-current") == "true", "the transcript to follow the playhead")
        position = console.driver.execute_script('return document.querySelector("[data-testid=recording-audio]").currentTime')
        self.assertGreaterEqual(position, max(0, recording_ms - 2000) / 1000 - 0.05)
        self.assertLess(position, recording_ms / 1000 + 3)
        console.driver.execute_script('document.querySelector("[data-testid=recording-audio]").pause()')
        self.assertEqual([], [error for error in console.errors() if "favicon" not in error])

        console.go("#charts")
        console.wait(lambda: console.find_all('[data-testid="stats"]'), "the latency charts")
        self.assertNotIn("–", console.by_test_id("stats").text.split("Turns")[0])
        self.screenshot(console, "latency")

    def test_a_handoff_and_a_filler_are_marked_and_the_call_is_found_by_what_was_said(self):
        # The server was given conversation conv_handoff: front desk hands a billing question to Billing.
        console = self.open_console()
        console.go("#calls")
        console.wait(lambda: console.find_all('[data-testid="calls"] tbody a'), "the calls")
        console.by_test_id("transcript-search").send_keys("bill EUROS\n")
        links = lambda: [link.text for link in console.find_all('[data-testid="calls"] tbody a')]
        console.wait(lambda: links() == ["conv_handoff"], "the search by what was said")
        console.find('[data-testid="calls"] tbody a').click()
        console.wait(lambda: console.find_all('[data-testid="handoff"]'), "the handoff's mark")
        self.assertEqual("Handed from Front desk to Billing", console.by_test_id("handoff").text)
        filler = console.by_test_id("filler")
        self.assertEqual("Filler: One moment, please.", filler.text)
        self.assertIn("Filler", filler.get_attribute("title"))
        self.assertIn("Billing", console.by_test_id("transcript").text)
        self.screenshot(console, "handoff")

    def test_an_agent_edited_in_the_console_answers_differently(self):
        console = self.open_console()
        console.go("#agent/new")
        console.wait(lambda: console.find_all('[data-testid="field-name"]'), "the agent form")
        # Inline validation errors: a temperature out of range is named under its field.
        console.by_test_id("field-name").send_keys("Concierge")
        console.by_test_id("field-instructions").send_keys("Say: Welcome to the hotel.")
        console.by_test_id("field-temperature").send_keys("7")
        console.by_test_id("save-agent").click()
        console.wait(lambda: console.by_test_id("problem-temperature").text, "the temperature's problem")
        self.assertIn("between 0 and 2", console.by_test_id("problem-temperature").text)
        self.assertEqual("true", console.by_test_id("field-temperature").get_attribute("aria-invalid"))
        self.screenshot(console, "agent")
        console.by_test_id("field-temperature").clear()
        console.by_test_id("save-agent").click()
        console.wait(lambda: console.driver.execute_script("return location.hash").startswith("#agent/agent_"), "the agent to be created")
        agent_id = console.driver.execute_script("return decodeURIComponent(location.hash.split('/')[1])")

        talk = console.by_test_id(f"talk-{agent_id}")
        self.assertEqual(f"{self.settings.url}?agent={agent_id}", talk.get_attribute("href"))
        page = self.open_web_client(agent_id)
        page.type_message("Hello?")
        self.assertIn("Welcome to the hotel.", page.wait_for_agent_answer(0).text)
        page.close()

        # Edited in the console, the agent's next conversation answers differently.
        console.wait(lambda: console.find_all('[data-testid="field-instructions"]'), "the edit form")
        instructions = console.by_test_id("field-instructions")
        instructions.clear()
        instructions.send_keys("Say: The hotel is full tonight.")
        console.by_test_id("save-agent").click()
        console.wait(lambda: "Saved" in console.find(".agent-form [role=status]").text, "the agent to be saved")
        edited = self.open_web_client(agent_id)
        edited.type_message("Hello?")
        self.assertIn("The hotel is full tonight.", edited.wait_for_agent_answer(0).text)
        console.go("#agents")
        console.wait(lambda: console.find_all('[data-testid="agents"] tbody a'), "the agent list")
        self.assertIn("Concierge", console.by_test_id("agents").text)
        self.screenshot(console, "agents")


if __name__ == "__main__":
    unittest.main()
