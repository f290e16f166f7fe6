"""What the real-client harnesses share: arguments, test audio, the scenario runner, and a log
that checks every server event a client received.

Each harness is run as `python <client>_harness.py --url ws://HOST:PORT/v1/realtime --token TOKEN
--spoken "what the recognizer hears" SCENARIO...`, prints `ok NAME` or `FAIL NAME: reason` per
scenario, and exits non-zero when any failed.
"""
import argparse
import asyncio
import contextlib
import logging
import math
import random
import struct
import sys
import time

from openai.types.realtime.realtime_server_event import RealtimeServerEvent
from pydantic import TypeAdapter, ValidationError

RATE = 24_000
# How long one scenario may take, and one awaited event within it.
SCENARIO_SECONDS = 60
EVENT_SECONDS = 20


def arguments():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True, help="the realtime endpoint, ws://HOST:PORT/v1/realtime")
    parser.add_argument("--token", required=True, help="a Parley client token")
    parser.add_argument("--spoken", required=True, help="what Parley's scripted recognizer hears")
    parser.add_argument("scenarios", nargs="+")
    return parser.parse_args()


def run(scenarios):
    """Runs the scenarios named on the command line, one at a time, and exits."""
    options = arguments()

    async def run_all():
        failures = 0
        for name in options.scenarios:
            try:
                await asyncio.wait_for(scenarios[name](options), SCENARIO_SECONDS)
                print(f"ok {name}", flush=True)
            except Exception as error:  # noqa: BLE001 - every failure is reported, none stops the others
                reason = f"timed out after {SCENARIO_SECONDS} s" if isinstance(error, asyncio.TimeoutError) else error
                print(f"FAIL {name}: {type(error).__name__}: {reason}", flush=True)
                failures += 1
        return failures

    sys.exit(1 if asyncio.run(run_all()) else 0)


def speech(milliseconds, seed=1):
    """A loud voiced sound as PCM16 bytes at 24 kHz: a 140 Hz buzz (a vowel's first harmonics)
    with some breath noise. Speech to an energy VAD and the scripted recognizer, and voiced as
    speech is, so the server's interruption policy does not take it for noise."""
    generator = random.Random(seed)
    count = RATE * milliseconds // 1000

    def sample(index):
        t = index / RATE
        buzz = sum(math.sin(2 * math.pi * 140 * harmonic * t) / harmonic for harmonic in range(1, 6))
        return int(4500 * buzz + generator.uniform(-1000, 1000))

    return struct.pack(f"<{count}h", *(sample(index) for index in range(count)))


def silence(milliseconds):
    return bytes(2 * (RATE * milliseconds // 1000))


def brief(error, limit=240):
    """The first line of an error's text, cut to `limit` characters."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return text if len(text) <= limit else text[:limit] + "…"


class Microphone:
    """Sends 20 ms frames in real time through `send(frame)` while running: what `say` was given,
    else silence, as a live microphone does (the server's VAD learns its noise floor from it)."""

    FRAME = 2 * RATE // 50

    def __init__(self, send):
        self._send = send
        self._pending = bytearray()
        self._drained = asyncio.Event()
        self._task = None

    async def __aenter__(self):
        self._task = asyncio.create_task(self._run())
        return self

    async def __aexit__(self, *exc):
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def say(self, audio):
        """Queues `audio` and waits until it has all been sent."""
        self._pending += audio
        self._drained.clear()
        drained = asyncio.ensure_future(self._drained.wait())
        await asyncio.wait([drained, self._task], return_when=asyncio.FIRST_COMPLETED)
        if self._task.done():
            drained.cancel()
            raise AssertionError(f"the microphone stopped: {self._task.exception()!r}")

    async def _run(self):
        started = time.monotonic()
        index = 0
        while True:
            frame = bytes(self._pending[:self.FRAME]).ljust(self.FRAME, b"\0")
            del self._pending[:self.FRAME]
            await self._send(frame)
            if not self._pending:
                self._drained.set()
            index += 1
            await asyncio.sleep(max(0, started + index / 50 - time.monotonic()))


class ErrorLogRecorder(logging.Handler):
    """Keeps the error records a client library logs (validation failures, handler crashes), and
    the warnings that contain one of `warnings` (the client repairing what the server sent)."""

    def __init__(self, *logger_names, warnings=()):
        super().__init__(logging.WARNING)
        self.warnings = warnings
        self.messages = []
        for name in logger_names:
            logging.getLogger(name).addHandler(self)

    def emit(self, record):
        message = record.getMessage()
        if record.levelno >= logging.ERROR or any(warning in message for warning in self.warnings):
            self.messages.append(f"{record.name}: {brief(message)}")

    def since(self, start):
        """Raises when anything was logged after the first `start` messages."""
        if self.messages[start:]:
            raise AssertionError(f"errors logged by the client: {self.messages[start:]}")


class EventLog:
    """Every raw server event a client received, in order.

    Each event must validate against the `openai` SDK's GA schema (the schema the clients are
    written against); `parley.*` events, `error` events and failed responses are problems too.
    """

    _schema = TypeAdapter(RealtimeServerEvent)

    def __init__(self):
        self.events = []
        self.problems = []
        self._changed = asyncio.Event()

    def record(self, event):
        self.events.append(event)
        kind = event.get("type", "")
        if kind.startswith("parley."):
            self.problems.append(f"Parley's own event reached a default session: {kind}")
        else:
            try:
                self._schema.validate_python(event)
            except ValidationError as error:
                first = error.errors()[0]
                self.problems.append(f"{kind} is outside OpenAI's schema: {first['loc']}: {brief(first['msg'])}")
        if kind == "error":
            error = event.get("error") or {}
            self.problems.append(f"error event: {error.get('code')}: {brief(error.get('message'))}")
        if kind == "response.done" and event["response"].get("status") == "failed":
            self.problems.append(f"failed response: {event['response'].get('status_details')}")
        self._changed.set()

    def types(self, start=0):
        """The types of the events from index `start` on, deltas left out."""
        return [event.get("type") for event in self.events[start:] if not event.get("type", "").endswith(".delta")]

    def of_type(self, kind):
        return [event for event in self.events if event.get("type") == kind]

    def check(self):
        """Raises when anything went wrong so far (each distinct problem once, with its count)."""
        if self.problems:
            counts = {}
            for problem in self.problems:
                counts[problem] = counts.get(problem, 0) + 1
            raise AssertionError("; ".join(f"{problem} (×{count})" if count > 1 else problem for problem, count in counts.items()))

    async def wait_for(self, what, predicate, start=0, seconds=EVENT_SECONDS):
        """Waits for an event at index `start` or later that satisfies `predicate` and returns it."""
        deadline = time.monotonic() + seconds
        index = start
        while True:
            self.check()
            while index < len(self.events):
                event = self.events[index]
                index += 1
                if predicate(event):
                    return event
            self._changed.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out after {seconds} s waiting for {what}; events since: {self.types(start)}")
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    async def wait_for_type(self, kind, start=0, seconds=EVENT_SECONDS):
        return await self.wait_for(kind, lambda event: event.get("type") == kind, start, seconds)

    async def response_done(self, start=0, seconds=EVENT_SECONDS):
        """Waits for the next `response.done` and returns its response."""
        return (await self.wait_for_type("response.done", start, seconds))["response"]


def transcript(response):
    """The text an assistant said in a `response.done` response."""
    parts = []
    for item in response.get("output") or []:
        for part in item.get("content") or []:
            parts.append(part.get("transcript") or part.get("text") or "")
    return "".join(parts)
