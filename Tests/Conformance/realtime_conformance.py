"""Drives a running Parley server with the official `openai` Python SDK's realtime client and
checks the protocol: every received event must validate against the SDK's own pydantic models,
and a default session (one that did not ask for Parley's own events) gets no other event.

Usage: python realtime_conformance.py --port PORT --token TOKEN --dialect ga|beta [--ca-file PEM] SCENARIO...
With --ca-file the SDK connects over https:// and wss:// to localhost, trusting only that certificate.
Prints one line per scenario and exits non-zero when any fails.
"""
import argparse
import asyncio
import audioop
import base64
import json
import ssl
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
        assert not event["type"].startswith("parley."), f"Parley event in a default session: {event['type']}"
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


def user_text(text):
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


async def conversation_order(connection, checker, dialect):
    """Every item names the item before it, the model's output items included, as a client
    that keeps its own copy of the conversation relies on."""
    created = (await checker.until_type("conversation.created"))["conversation"]["id"]
    for text in ["Say hello", "Say hello again", "And once more"]:
        await connection.conversation.item.create(item=user_text(text))
        await connection.response.create()
        done = await checker.until_type("response.done")
        assert done["response"]["status"] == "completed", done["response"]
        assert done["response"]["conversation_id"] == created, done["response"]["conversation_id"]
    added = checker.seen(names(dialect)["item_added"])
    assert len(added) == 6, [event["item"]["role"] for event in added]
    for previous, event in zip(added, added[1:]):
        assert event["previous_item_id"] == previous["item"]["id"], (event["previous_item_id"], previous["item"]["id"])
    assert [event["item"]["role"] for event in added] == ["user", "assistant"] * 3


async def response_metadata(connection, checker, dialect):
    await connection.conversation.item.create(item=user_text("Say hello"))
    metadata = {"client_event_id": "evt_client_42", "topic": "greeting"}
    await connection.response.create(response={"metadata": metadata, "instructions": "Be brief.", "max_output_tokens": 50})
    created = await checker.until_type("response.created")
    assert created["response"]["metadata"] == metadata, created["response"]
    done = await checker.until_type("response.done")
    assert done["response"]["metadata"] == metadata, done["response"]
    assert done["response"]["max_output_tokens"] == 50, done["response"]


async def truncate_then_cancel(connection, checker, dialect):
    """A client's interruption: truncate the item being spoken, then cancel the response.
    Truncating does not end the response; cancelling it again is not an error."""
    await connection.conversation.item.create(item=user_text("Tell me a long story"))
    await connection.response.create()
    first_audio = await checker.until_type(names(dialect)["audio_delta"])
    await connection.conversation.item.truncate(item_id=first_audio["item_id"], content_index=0, audio_end_ms=200)
    truncated = await checker.until_type("conversation.item.truncated")
    assert truncated["item_id"] == first_audio["item_id"] and truncated["audio_end_ms"] == 200
    assert not checker.seen("response.done"), "truncate ended the response"
    await connection.response.cancel()
    done = await checker.until_type("response.done")
    assert done["response"]["status"] == "cancelled", done["response"]
    await connection.response.cancel()
    await connection.conversation.item.create(item=user_text("Say hello"))
    await connection.response.create()
    done = await checker.until_type("response.done")
    assert done["response"]["status"] == "completed"
    assert not checker.seen("error"), checker.seen("error")
    assert len(checker.seen("conversation.item.truncated")) == 1, "a truncated event nobody asked for"


async def out_of_band(connection, checker, dialect):
    """A response outside the conversation (classification, summaries): it reads only its
    input, adds no item, and carries its metadata."""
    await connection.conversation.item.create(item=user_text("Say hello"))
    await checker.until_type(names(dialect)["item_added"])
    items_before = len(checker.seen(names(dialect)["item_added"]))
    modalities = {"output_modalities": ["text"]} if dialect == "ga" else {"modalities": ["text"]}
    await connection.response.create(response={
        "conversation": "none", "metadata": {"purpose": "classify"}, "input": [user_text("Classify: hello")], **modalities,
    })
    created = await checker.until_type("response.created")
    assert created["response"]["conversation_id"] is None and created["response"]["metadata"] == {"purpose": "classify"}
    done = await checker.until_type("response.done")
    assert done["response"]["status"] == "completed" and done["response"]["output"], done["response"]
    assert len(checker.seen(names(dialect)["item_added"])) == items_before, "an out-of-band response added an item"


async def tool_choice_required(connection, checker, dialect):
    tool = {"type": "function", "name": "get_weather", "description": "Weather for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
    session = session_update(dialect, None, tools=[tool])
    session["tool_choice"] = "required"
    await connection.session.update(session=session)
    updated = await checker.until_type("session.updated")
    assert updated["session"]["tool_choice"] == "required", updated["session"]["tool_choice"]
    await connection.conversation.item.create(item=user_text("Say hello"))
    await connection.response.create()
    arguments = await checker.until_type("response.function_call_arguments.done")
    assert arguments["name" if dialect == "ga" else "call_id"]
    done = await checker.until_type("response.done")
    assert done["response"]["output"][-1]["type"] == "function_call", done["response"]


async def limits(connection, checker, dialect):
    """A field over its limit is refused with an error naming it; the session goes on."""
    session = session_update(dialect, None)
    session["instructions"] = "x" * 70_000
    await connection.session.update(session=session)
    error = await checker.until(lambda event: event["type"] == "error", "error for the instructions")
    assert error["error"]["code"] == "invalid_value" and error["error"]["param"] == "session.instructions", error
    await connection.conversation.item.create(item=user_text("Say hello"))
    await connection.response.create(response={"metadata": {f"key{index}": "v" for index in range(17)}})
    error = await checker.until(lambda event: event["type"] == "error", "error for the metadata")
    assert error["error"]["param"] == "response.metadata", error
    await connection.response.create(response={"tool_choice": {"type": "function", "name": "nowhere"}})
    error = await checker.until(lambda event: event["type"] == "error", "error for the tool choice")
    assert error["error"]["param"] == "response.tool_choice", error
    await connection.response.create()
    done = await checker.until_type("response.done")
    assert done["response"]["status"] == "completed"


async def idle_timeout(connection, checker, dialect):
    if dialect != "ga":
        return  # idle_timeout_ms and timeout_triggered are GA only
    vad = {"type": "server_vad", "silence_duration_ms": 300, "idle_timeout_ms": 1000, "create_response": True}
    await connection.session.update(session=session_update(dialect, vad))
    await checker.until_type("session.updated")
    silence = noise(1500, 100, 7)
    for start in range(0, len(silence), 2400):
        await connection.input_audio_buffer.append(audio=pcm16(silence[start:start + 2400]))
    triggered = await checker.until_type("input_audio_buffer.timeout_triggered")
    committed = await checker.until_type("input_audio_buffer.committed")
    assert committed["item_id"] == triggered["item_id"]
    assert triggered["audio_end_ms"] - triggered["audio_start_ms"] >= 1000, triggered
    done = await checker.until_type("response.done")
    assert done["response"]["status"] == "completed"


async def transcription_session(connection, checker, dialect):
    """Dictation: audio in, transcripts out, no responses."""
    vad = {"type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300, "silence_duration_ms": 300}
    transcription = {"model": "whisper-1", "language": "en"}
    if dialect == "ga":
        await connection.session.update(session={"type": "transcription", "audio": {"input": {
            "format": {"type": "audio/pcm", "rate": RATE}, "transcription": transcription, "turn_detection": vad}}})
        updated = await checker.until_type("session.updated")
    else:
        await connection.send({"type": "transcription_session.update", "session": {
            "input_audio_format": "pcm16", "input_audio_transcription": transcription, "turn_detection": vad}})
        updated = await checker.until_type("transcription_session.updated")
    assert updated["session"].get("type", "transcription") == "transcription", updated["session"]
    audio = noise(300, 200, 8) + noise(800, 9000, 9) + noise(700, 200, 10)
    for start in range(0, len(audio), 2400):
        await connection.input_audio_buffer.append(audio=pcm16(audio[start:start + 2400]))
    completed = await checker.until_type("conversation.item.input_audio_transcription.completed")
    assert completed["transcript"] == "hello there", completed
    await connection.response.create()
    error = await checker.until(lambda event: event["type"] == "error", "error for response.create")
    assert error["error"]["param"] == "session.type", error
    assert not checker.seen("response.created"), "a transcription session created a response"


async def g711_voice_turn(connection, checker, dialect):
    """Telephone audio: μ-law in, μ-law out, at 8 kHz."""
    vad = {"type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300, "silence_duration_ms": 300, "create_response": True}
    session = session_update(dialect, vad)
    if dialect == "ga":
        session["audio"]["input"]["format"] = {"type": "audio/pcmu"}
        session["audio"]["output"]["format"] = {"type": "audio/pcmu"}
    else:
        session["input_audio_format"] = session["output_audio_format"] = "g711_ulaw"
    await connection.session.update(session=session)
    updated = await checker.until_type("session.updated")
    formats = updated["session"]["audio"]["output"]["format"]["type"] if dialect == "ga" else updated["session"]["output_audio_format"]
    assert formats in ("audio/pcmu", "g711_ulaw"), formats
    telephone = noise(400, 200, 11)[::3] + noise(800, 9000, 12)[::3] + noise(900, 200, 13)[::3]
    frame = 8000 // 50
    for start in range(0, len(telephone), frame):
        chunk = struct.pack("<%dh" % len(telephone[start:start + frame]), *telephone[start:start + frame])
        await connection.input_audio_buffer.append(audio=base64.b64encode(audioop.lin2ulaw(chunk, 2)).decode())
    completed = await checker.until_type("conversation.item.input_audio_transcription.completed")
    assert completed["transcript"] == "hello there", completed
    done = await checker.until_type("response.done")
    assert done["response"]["status"] == "completed", done["response"]
    audio = b"".join(base64.b64decode(event["delta"]) for event in checker.seen(names(dialect)["audio_delta"]))
    # "Hello from Parley." is 3 words of 100 ms from the scripted synthesizer: 300 ms at 8 kHz, one byte a sample.
    assert abs(len(audio) - 2400) <= 80, len(audio)
    assert max(abs(sample) for sample in struct.unpack("<%dh" % len(audio), audioop.ulaw2lin(audio, 2))) > 1000, "silent reply"


SCENARIOS = {
    "manual_voice_turn": manual_voice_turn,
    "server_vad_turn": server_vad_turn,
    "text_turn": text_turn,
    "function_call": function_call,
    "cancel": cancel,
    "truncate": truncate,
    "conversation_order": conversation_order,
    "response_metadata": response_metadata,
    "truncate_then_cancel": truncate_then_cancel,
    "out_of_band": out_of_band,
    "tool_choice_required": tool_choice_required,
    "limits": limits,
    "idle_timeout": idle_timeout,
    "transcription_session": transcription_session,
    "g711_voice_turn": g711_voice_turn,
}


async def run(arguments):
    if arguments.ca_file:
        http, websocket, host = "https", "wss", "localhost"
        connection_options = {"ssl": ssl.create_default_context(cafile=arguments.ca_file)}
    else:
        http, websocket, host = "http", "ws", "127.0.0.1"
        connection_options = {}
    client = AsyncOpenAI(
        api_key=arguments.token,
        base_url=f"{http}://{host}:{arguments.port}/v1",
        websocket_base_url=f"{websocket}://{host}:{arguments.port}/v1",
    )
    realtime = client.realtime if arguments.dialect == "ga" else client.beta.realtime
    failures = 0
    for name in arguments.scenarios:
        try:
            async with realtime.connect(model="parley", websocket_connection_options=connection_options) as connection:
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
    parser.add_argument("--ca-file", help="a PEM certificate: connect over TLS and trust only it")
    parser.add_argument("scenarios", nargs="+", choices=sorted(SCENARIOS))
    sys.exit(1 if asyncio.run(run(parser.parse_args())) else 0)


if __name__ == "__main__":
    main()
