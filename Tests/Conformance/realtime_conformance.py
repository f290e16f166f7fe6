"""Drives a running Parley server with the official `openai` Python SDK's realtime client and
checks the protocol: every received event must validate against the SDK's own pydantic models.

Usage: python realtime_conformance.py --port PORT --token TOKEN --dialect ga|beta SCENARIO...
Prints one line per scenario and exits non-zero when any fails.
"""
import argparse
import asyncio
import base64
import json
import random
import struct
import sys
import time

from openai import AsyncOpenAI
from pydantic import TypeAdapter

RATE = 24_000
DEADLINE_SECONDS = 30


def pcm16(samples):
    return base64.b64encode(struct.pack("<%dh" % len(samples), *samples)).decode()


def noise(milliseconds, amplitude, seed):
    generator = random.Random(seed)
    return [int(generator.uniform(-amplitude, amplitude)) for _ in range(RATE * milliseconds // 1000)]


class Checker:
    """Receives events, validates each one, and waits for the one a scenario needs."""

    def __init__(self, connection, dialect):
        self.connection = connection
        self.events = []
        if dialect == "ga":
            from openai.types.realtime.realtime_server_event import RealtimeServerEvent
        else:
            from openai.types.beta.realtime.realtime_server_event import RealtimeServerEvent
        self.adapter = TypeAdapter(RealtimeServerEvent)

    async def next(self):
        raw = await asyncio.wait_for(self.connection.recv_bytes(), DEADLINE_SECONDS)
        event = json.loads(raw)
        if not event["type"].startswith("parley."):
            self.adapter.validate_python(event)
        self.events.append(event)
        return event

    async def until(self, predicate, what):
        deadline = time.monotonic() + DEADLINE_SECONDS
        while time.monotonic() < deadline:
            event = await self.next()
            if event["type"] == "error" and not what.startswith("error"):
                raise AssertionError(f"error while waiting for {what}: {event['error']}")
            if predicate(event):
                return event
        raise AssertionError(f"timed out waiting for {what}")

    async def until_type(self, event_type):
        return await self.until(lambda event: event["type"] == event_type, event_type)

    def seen(self, event_type):
        return [event for event in self.events if event["type"] == event_type]


def names(dialect):
    if dialect == "ga":
        return {
            "audio_delta": "response.output_audio.delta",
            "transcript_delta": "response.output_audio_transcript.delta",
            "transcript_done": "response.output_audio_transcript.done",
            "item_added": "conversation.item.added",
        }
    return {
        "audio_delta": "response.audio.delta",
        "transcript_delta": "response.audio_transcript.delta",
        "transcript_done": "response.audio_transcript.done",
        "item_added": "conversation.item.created",
    }


def session_update(dialect, turn_detection, tools=None):
    if dialect == "ga":
        session = {
            "type": "realtime",
            "instructions": "You are a test agent.",
            "output_modalities": ["audio"],
            "audio": {
                "input": {"format": {"type": "audio/pcm", "rate": RATE}, "turn_detection": turn_detection},
                "output": {"format": {"type": "audio/pcm", "rate": RATE}, "voice": "alloy"},
            },
        }
    else:
        session = {
            "instructions": "You are a test agent.",
            "modalities": ["text", "audio"],
            "input_audio_format": "pcm16",
            "output_audio_format": "pcm16",
            "turn_detection": turn_detection,
            "voice": "alloy",
        }
    if tools is not None:
        session["tools"] = tools
    return session


async def manual_voice_turn(connection, checker, dialect):
    await connection.session.update(session=session_update(dialect, None))
    await checker.until_type("session.updated")
    audio = noise(200, 300, 1) + noise(900, 9000, 2) + noise(200, 300, 3)
    for start in range(0, len(audio), 2400):
        await connection.input_audio_buffer.append(audio=pcm16(audio[start:start + 2400]))
    await connection.input_audio_buffer.commit()
    committed = await checker.until_type("input_audio_buffer.committed")
    completed = await checker.until_type("conversation.item.input_audio_transcription.completed")
    assert completed["item_id"] == committed["item_id"], "transcript for another item"
    assert completed["transcript"] == "hello there", completed["transcript"]
    await connection.response.create()
    done = await checker.until_type("response.done")
    assert done["response"]["status"] == "completed", done["response"]
    assert checker.seen(names(dialect)["audio_delta"]), "no audio"
    transcript = checker.seen(names(dialect)["transcript_done"])[-1]["transcript"]
    assert transcript == "Hello from Parley.", transcript


async def server_vad_turn(connection, checker, dialect):
    vad = {"type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300, "silence_duration_ms": 300, "create_response": True}
    await connection.session.update(session=session_update(dialect, vad))
    await checker.until_type("session.updated")
    audio = noise(400, 200, 4) + noise(800, 9000, 5) + noise(900, 200, 6)
    frame = RATE // 50
    started = time.monotonic()
    for index, start in enumerate(range(0, len(audio), frame)):
        await connection.input_audio_buffer.append(audio=pcm16(audio[start:start + frame]))
        # Real-time pacing: the next 20 ms frame leaves when it would leave a microphone.
        await asyncio.sleep(max(0, started + (index + 1) * 0.02 - time.monotonic()))
    await checker.until_type("input_audio_buffer.speech_started")
    await checker.until_type("input_audio_buffer.speech_stopped")
    await checker.until_type("conversation.item.input_audio_transcription.completed")
    await checker.until_type("response.created")
    done = await checker.until_type("response.done")
    assert done["response"]["status"] == "completed", done["response"]


async def text_turn(connection, checker, dialect):
    await connection.conversation.item.create(item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Say hello"}]})
    added = await checker.until_type(names(dialect)["item_added"])
    assert added["item"]["role"] == "user"
    await connection.response.create()
    await checker.until_type(names(dialect)["transcript_delta"])
    done = await checker.until_type("response.done")
    assert done["response"]["status"] == "completed"
    assert done["response"]["output"][0]["role"] == "assistant"


async def function_call(connection, checker, dialect):
    tool = {"type": "function", "name": "get_weather", "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
    await connection.session.update(session=session_update(dialect, None, tools=[tool]))
    await checker.until_type("session.updated")
    await connection.conversation.item.create(item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": "What is the weather in Paris?"}]})
    await connection.response.create()
    arguments = await checker.until_type("response.function_call_arguments.done")
    assert json.loads(arguments["arguments"]) == {"city": "Paris"}
    done = await checker.until_type("response.done")
    call = done["response"]["output"][-1]
    assert call["type"] == "function_call" and call["name"] == "get_weather", call
    await connection.conversation.item.create(item={"type": "function_call_output", "call_id": arguments["call_id"], "output": json.dumps({"sky": "sunny"})})
    await connection.response.create()
    done = await checker.until_type("response.done")
    transcript = checker.seen(names(dialect)["transcript_done"])[-1]["transcript"]
    assert "sunny" in transcript, transcript


async def cancel(connection, checker, dialect):
    await connection.conversation.item.create(item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Tell me a long story"}]})
    await connection.response.create()
    first_audio = await checker.until_type(names(dialect)["audio_delta"])
    await connection.response.cancel()
    done = await checker.until_type("response.done")
    assert done["response"]["id"] == first_audio["response_id"]
    assert done["response"]["status"] == "cancelled", done["response"]
    # The session goes on.
    await connection.conversation.item.create(item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Say hello"}]})
    await connection.response.create()
    done = await checker.until_type("response.done")
    assert done["response"]["status"] == "completed"


async def truncate(connection, checker, dialect):
    await connection.conversation.item.create(item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Say hello"}]})
    await connection.response.create()
    done = await checker.until_type("response.done")
    item_id = done["response"]["output"][0]["id"]
    await connection.conversation.item.truncate(item_id=item_id, content_index=0, audio_end_ms=300)
    truncated = await checker.until_type("conversation.item.truncated")
    assert truncated["item_id"] == item_id and truncated["audio_end_ms"] == 300


SCENARIOS = {
    "manual_voice_turn": manual_voice_turn,
    "server_vad_turn": server_vad_turn,
    "text_turn": text_turn,
    "function_call": function_call,
    "cancel": cancel,
    "truncate": truncate,
}


async def run(arguments):
    client = AsyncOpenAI(
        api_key=arguments.token,
        base_url=f"http://127.0.0.1:{arguments.port}/v1",
        websocket_base_url=f"ws://127.0.0.1:{arguments.port}/v1",
    )
    realtime = client.realtime if arguments.dialect == "ga" else client.beta.realtime
    failures = 0
    for name in arguments.scenarios:
        try:
            async with realtime.connect(model="parley") as connection:
                checker = Checker(connection, arguments.dialect)
                created = await checker.until_type("session.created")
                assert checker.events[0] is created, "session.created must be the first event"
                await SCENARIOS[name](connection, checker, arguments.dialect)
            print(f"ok {arguments.dialect} {name} ({len(checker.events)} events validated)")
        except Exception as error:  # noqa: BLE001 - report every failure and go on
            failures += 1
            print(f"FAIL {arguments.dialect} {name}: {type(error).__name__}: {error}")
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--dialect", choices=["ga", "beta"], required=True)
    parser.add_argument("scenarios", nargs="+", choices=sorted(SCENARIOS))
    sys.exit(1 if asyncio.run(run(parser.parse_args())) else 0)


if __name__ == "__main__":
    main()
