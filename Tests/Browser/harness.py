"""Drives the Parley web page in headless Chromium with a fake microphone, against a real server.

Settings come from the environment:
  PARLEY_URL           the server's base URL, e.g. http://127.0.0.1:8080 (required)
  PARLEY_SPEECH_WAV    a WAV the fake microphone plays: synthesised speech, or any sound the
                       server's recognizer turns into PARLEY_SPEECH_TEXT (required)
  PARLEY_SPEECH_TEXT   the words the server should hear in that WAV (required)
  PARLEY_ARTIFACTS_DIR where screenshots go (default: <repo>/.cache/browser-tests)
  PARLEY_SCREENSHOT_PREFIX  put before each screenshot's name (e.g. "embedded-"; default none)
  PARLEY_CONTROL       "stdio" when a supervisor can stop and start the server: the tests print
                       "parley-control: <stop-server|start-server>" on stdout and wait for a line
                       "ok" on stdin (the Swift wrapper in Tests/ParleyServerTests does this)
  PARLEY_CHROMIUM, PARLEY_CHROMEDRIVER  browser and driver (default: Debian's)
"""

import os
import re
import sys
import tempfile
import time
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

REPOSITORY = Path(__file__).resolve().parents[2]

# Levels of the page's microphone meter (RMS, linear) that separate speech from the gaps.
SPEECH_LEVEL = 0.02
QUIET_LEVEL = 0.006


@dataclass(frozen=True)
class Settings:
    url: str
    speech_wav: Path
    speech_text: str
    artifacts: Path
    screenshot_prefix: str
    can_restart_server: bool

    @staticmethod
    def from_environment():
        missing = [name for name in ("PARLEY_URL", "PARLEY_SPEECH_WAV", "PARLEY_SPEECH_TEXT") if not os.environ.get(name)]
        if missing:
            raise SystemExit(f"set {', '.join(missing)} (see Tests/Browser/harness.py)")
        artifacts = Path(os.environ.get("PARLEY_ARTIFACTS_DIR", REPOSITORY / ".cache" / "browser-tests"))
        artifacts.mkdir(parents=True, exist_ok=True)
        return Settings(
            url=os.environ["PARLEY_URL"].rstrip("/") + "/",
            speech_wav=Path(os.environ["PARLEY_SPEECH_WAV"]),
            speech_text=os.environ["PARLEY_SPEECH_TEXT"],
            artifacts=artifacts,
            screenshot_prefix=os.environ.get("PARLEY_SCREENSHOT_PREFIX", ""),
            can_restart_server=os.environ.get("PARLEY_CONTROL") == "stdio",
        )


def control_server(command):
    """Asks the supervising process to stop or start the server; returns once it has."""
    print(f"parley-control: {command}", flush=True)
    reply = sys.stdin.readline().strip()
    if reply != "ok":
        raise AssertionError(f"the supervisor could not {command}: {reply!r}")


@dataclass(frozen=True)
class FakeMicrophone:
    """A WAV the fake capture device loops: one utterance, then `gap` seconds of silence."""
    path: Path
    speech_seconds: float
    gap_seconds: float


def make_fake_microphone(speech_wav, gap_seconds, directory):
    """Writes the looped microphone file: the speech trimmed of silence, then a silent gap."""
    with wave.open(str(speech_wav), "rb") as source:
        channels, width, rate = source.getnchannels(), source.getsampwidth(), source.getframerate()
        frames = source.readframes(source.getnframes())
    if width != 2:
        raise AssertionError(f"{speech_wav} must be 16-bit PCM, not {width * 8}-bit")
    samples = np.frombuffer(frames, dtype="<i2").astype(np.float32)
    samples = samples.reshape(-1, channels).mean(axis=1)
    loud = np.flatnonzero(np.abs(samples) > 0.02 * 32768)
    if loud.size == 0:
        raise AssertionError(f"{speech_wav} is silent")
    speech = samples[loud[0]:loud[-1] + 1]
    speech *= 0.5 * 32767 / np.max(np.abs(speech))
    looped = np.concatenate([speech, np.zeros(int(gap_seconds * rate), dtype=np.float32)])
    path = Path(directory) / f"microphone-gap{gap_seconds:g}.wav"
    with wave.open(str(path), "wb") as target:
        target.setnchannels(1)
        target.setsampwidth(2)
        target.setframerate(rate)
        target.writeframes(looped.astype("<i2").tobytes())
    return FakeMicrophone(path=path, speech_seconds=len(speech) / rate, gap_seconds=gap_seconds)


def content_words(text):
    """Lower-case words of three letters or more, without punctuation."""
    return [word for word in re.findall(r"[a-z0-9']+", text.lower()) if len(word) >= 3]


class ServerRefusedConnection(Exception):
    """The server answered the page's WebSocket upgrade with an HTTP error: no use waiting."""


def wait_until(predicate, timeout, describe):
    """Polls `predicate` until it returns something truthy, or fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except AssertionError as error:
            last_error = error
        time.sleep(0.02)
    detail = f" (last: {last_error})" if last_error else ""
    raise AssertionError(f"timed out after {timeout:g} s waiting for {describe}{detail}")


@dataclass(frozen=True)
class Message:
    role: str
    state: str
    text: str
    heard: str


class Page:
    """One headless Chromium showing the Parley page."""

    def __init__(self, settings, microphone=None, deny_microphone=False, dark=False, size=(1100, 800), query="",
                 before_page_script=None):
        options = Options()
        options.binary_location = os.environ.get("PARLEY_CHROMIUM", "/usr/bin/chromium")
        arguments = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            f"--window-size={size[0]},{size[1]}",
            "--autoplay-policy=no-user-gesture-required",
            "--use-fake-device-for-media-stream",
            # WebRTC calls on loopback: let ICE use it, and show the address rather than an mDNS name.
            "--allow-loopback-in-peer-connection", "--disable-features=WebRtcHideLocalIpsWithMdns",
        ]
        if deny_microphone:
            arguments.append("--deny-permission-prompts")
        else:
            arguments.append("--use-fake-ui-for-media-stream")
        if microphone:
            arguments.append(f"--use-file-for-fake-audio-capture={microphone.path}")
        for argument in arguments:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(os.environ.get("PARLEY_CHROMEDRIVER", "/usr/bin/chromedriver"))
        self.driver = webdriver.Chrome(service=service, options=options)
        self.microphone = microphone
        self.console_errors = []
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": size[0], "height": size[1], "deviceScaleFactor": 1, "mobile": size[0] < 600})
        if dark:
            self.driver.execute_cdp_cmd(
                "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        if before_page_script:
            # Runs in the page before any of its own scripts (to take a browser feature away, say).
            self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": before_page_script})
        self.driver.get(settings.url + query)
        self.record_statuses()

    def close(self):
        self.driver.quit()

    # Reading the page

    def debug(self):
        return self.driver.execute_script("return window.parleyDebug ? window.parleyDebug.snapshot() : null")

    def call_audio(self):
        """What the browser has received on the WebRTC call's audio track ({"samples", "energy"},
        from its WebRTC statistics), or None when the page talks over the WebSocket."""
        return self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "window.parleyDebug.callAudio().then(done, () => done(null));")

    def status(self):
        return self.driver.execute_script('return document.querySelector("[data-testid=status]").dataset.state')

    def status_text(self):
        return self.by_test_id("status").text

    def by_test_id(self, test_id):
        return self.driver.find_element(By.CSS_SELECTOR, f'[data-testid="{test_id}"]')

    def messages(self, role=None):
        rows = self.driver.execute_script("""
            return [...document.querySelectorAll('.message[data-role]')].map((element) => ({
              role: element.dataset.role, state: element.dataset.state,
              text: element.querySelector('.bubble').textContent,
              heard: element.querySelector('.message-text').textContent }));
        """)
        found = [Message(**row) for row in rows]
        return [message for message in found if role is None or message.role == role]

    def notices(self):
        return [element.text for element in self.driver.find_elements(By.CSS_SELECTOR, '[data-role="notice"]')]

    def record_statuses(self):
        """Keeps every status the page shows in `window.statusHistory` (a test-side observer)."""
        self.driver.execute_script("""
            const status = document.querySelector('[data-testid=status]');
            window.statusHistory = [status.dataset.state];
            new MutationObserver(() => {
              const state = status.dataset.state;
              if (window.statusHistory.at(-1) !== state) window.statusHistory.push(state);
            }).observe(status, { attributes: true, attributeFilter: ['data-state'] });
        """)

    def status_history(self):
        return self.driver.execute_script("return window.statusHistory")

    def browser_errors(self):
        """Every error the browser console has shown so far."""
        self.console_errors += [entry["message"] for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE"]
        return list(self.console_errors)

    def refused_handshakes(self):
        return [error for error in self.browser_errors() if "Error during WebSocket handshake" in error]

    def screenshot(self, path):
        self.driver.save_screenshot(str(path))

    # Waiting

    def wait_ready(self, timeout=30, microphone=True):
        def ready():
            refusals = self.refused_handshakes()
            if refusals:
                raise ServerRefusedConnection(f"the server refused the page's WebSocket handshake: {refusals[0]}")
            snapshot = self.debug()
            return snapshot and snapshot["connection"] == "open" and (
                not microphone or snapshot["microphone"] == "open") and snapshot["status"] == "ready"
        try:
            wait_until(ready, timeout, "the page to connect" + (" and open the microphone" if microphone else ""))
        except (AssertionError, ServerRefusedConnection) as error:
            raise AssertionError(f"{error}; the page shows {self.describe()}") from None

    def describe(self):
        """What the page shows and logs, for failure messages."""
        banner = self.driver.find_element(By.ID, "banner")
        return (f"status {self.status_text()!r}, banner {banner.text!r}, notices {self.notices()}, "
                f"debug {self.debug()}, console {self.browser_errors()}")

    def wait_for_agent_answer(self, after_count, timeout=60, states=("done",)):
        """Waits for agent message number `after_count + 1` to end in one of `states`."""
        def answered():
            agents = self.messages("agent")
            if len(agents) > after_count and agents[after_count].state in states:
                return agents[after_count]
            return None
        try:
            return wait_until(answered, timeout, f"agent message {after_count + 1} to be {'/'.join(states)}")
        except AssertionError as error:
            raise AssertionError(f"{error}; the page shows {self.describe()}") from None

    # Acting

    def type_message(self, text):
        self.by_test_id("composer").send_keys(text)
        self.by_test_id("send").click()

    def press_talk(self):
        ActionChains(self.driver).click_and_hold(self.by_test_id("talk")).perform()

    def release_talk(self):
        ActionChains(self.driver).release().perform()

    def tap_talk(self):
        """A quick tap: pointer down and up dispatched in one script, so the tap stays quick
        however slowly a loaded machine runs the browser driver."""
        self.driver.execute_script(
            """
            const button = arguments[0];
            const pointer = { pointerId: 1, pointerType: "mouse", button: 0, isPrimary: true, bubbles: true };
            button.dispatchEvent(new PointerEvent("pointerdown", pointer));
            button.dispatchEvent(new PointerEvent("pointerup", pointer));
            """,
            self.by_test_id("talk"),
        )

    def space_down(self):
        ActionChains(self.driver).key_down(Keys.SPACE).perform()

    def space_up(self):
        ActionChains(self.driver).key_up(Keys.SPACE).perform()

    def wait_for_gap_start(self, timeout=30, quiet_for=0.3):
        """Waits until the looped utterance has ended `quiet_for` seconds ago (pauses between words
        are shorter); returns the microphone clock (seconds) at the utterance's end."""
        wait_until(lambda: self.debug()["micLevel"] > SPEECH_LEVEL, timeout, "the fake microphone's speech")
        quiet_since = None

        def quiet_long_enough():
            nonlocal quiet_since
            snapshot = self.debug()
            if snapshot["micLevel"] >= QUIET_LEVEL:
                quiet_since = None
                return None
            quiet_since = quiet_since if quiet_since is not None else snapshot["micSeconds"]
            return quiet_since if snapshot["micSeconds"] - quiet_since >= quiet_for else None
        return wait_until(quiet_long_enough, timeout, "the silence after the fake microphone's speech")

    def wait_until_next_utterance_is_near(self, lead=0.4, timeout=60):
        """Waits until the looped utterance will start again in about `lead` seconds."""
        gap_started = self.wait_for_gap_start(timeout=timeout)
        self.wait_for_mic_clock(gap_started + self.microphone.gap_seconds - lead, timeout=timeout)

    def wait_for_mic_clock(self, seconds, timeout=30):
        wait_until(lambda: self.debug()["micSeconds"] >= seconds, timeout, f"microphone clock {seconds:.2f} s")

    def hold_through_one_utterance(self, press=None, release=None):
        """Presses during a gap, holds while the whole next utterance plays, releases in the gap after.

        Returns the page's debug snapshot taken right after the release.
        """
        microphone = self.microphone
        if microphone.gap_seconds < 1.5:
            raise AssertionError("hold-to-talk needs a gap of at least 1.5 s in the fake microphone file")
        gap_started = self.wait_for_gap_start()
        (press or self.press_talk)()
        next_speech_ends = gap_started + microphone.gap_seconds + microphone.speech_seconds
        self.wait_for_mic_clock(next_speech_ends + min(0.5, microphone.gap_seconds - 0.6))
        (release or self.release_talk)()
        return self.debug()
