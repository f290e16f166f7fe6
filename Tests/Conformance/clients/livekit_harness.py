"""LiveKit Agents (`livekit.plugins.openai.realtime.RealtimeModel`) against Parley.

Drives the model's `RealtimeSession` the way `AgentSession` does: the chat context is synced
with `update_chat_ctx`, each turn asks `generate_reply`, an interruption is `interrupt()` then
`truncate()`, and tools are `update_tools`. LiveKit matches `response.created` to its request
by `response.metadata.client_event_id` and mirrors the conversation from `previous_item_id`,
so a missing echo is a `generate_reply` timeout and a wrong anchor scrambles the order.
Error events and logs, failed responses and timeouts fail the scenario.
Scenarios: consecutive_replies, spoken_turn, interruption, tool_call (`tool_choice="required"`) and
tool_call_named (`tool_choice` naming the function).
"""
import asyncio
import contextlib
from dataclasses import dataclass, field

from livekit import rtc
from livekit.agents import function_tool, llm
from livekit.plugins.openai.realtime import RealtimeModel

import harness

LOGGED_ERRORS = harness.ErrorLogRecorder(
    "livekit.agents",
    "livekit.plugins.openai",
    warnings=("placed a chat history item after an unknown item", "discarding response", "failed to insert item"),
)
REPLY_SECONDS = 20


@function_tool
async def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@dataclass
class Reply:
    """What one generation said."""
    text: str = ""
    audio_milliseconds: float = 0
    function_calls: list = field(default_factory=list)


@contextlib.asynccontextmanager
async def realtime_session(options):
    """A RealtimeSession whose raw events go to a log; checked when it ends."""
    model = RealtimeModel(base_url=options.url, api_key=options.token)
    session = model.session()
    log = harness.EventLog()
    sent = []
    session.on("openai_server_event_received", log.record)
    session.on("openai_client_event_queued", lambda event: sent.append(event["type"]))
    session.on("error", lambda error: log.problems.append(f"error emitted: {harness.brief(error.error)}"))
    logged = len(LOGGED_ERRORS.messages)
    try:
        await log.wait_for_type("session.updated")
        yield session, log
        log.check()
        requested, answered = sent.count("conversation.item.truncate"), len(log.of_type("conversation.item.truncated"))
        assert answered <= requested, f"{answered} conversation.item.truncated for {requested} truncate requests"
        LOGGED_ERRORS.since(logged)
    finally:
        await session.aclose()
        await model.aclose()


async def add_user_message(session, text):
    chat_ctx = session.chat_ctx.copy()
    chat_ctx.add_message(role="user", content=text)
    await session.update_chat_ctx(chat_ctx)


async def collect(generation, on_audio=None):
    """Reads a generation to its end: text, audio and function calls."""
    reply = Reply()

    async def read_message(message):
        async def read_text():
            async for piece in message.text_stream:
                reply.text += str(piece)

        async def read_audio():
            async for frame in message.audio_stream:
                reply.audio_milliseconds += 1000 * frame.samples_per_channel / frame.sample_rate
                if on_audio:
                    await on_audio(message, reply)

        await asyncio.gather(read_text(), read_audio())

    async def read_messages():
        # Each message is read as soon as it starts; the stream itself ends with the response.
        readers = [asyncio.create_task(read_message(message)) async for message in generation.message_stream]
        await asyncio.gather(*readers)

    async def read_calls():
        reply.function_calls = [call async for call in generation.function_stream]

    await asyncio.wait_for(asyncio.gather(read_messages(), read_calls()), REPLY_SECONDS)
    return reply


def roles(session):
    return [item.role for item in session.chat_ctx.items if item.type == "message"]


async def consecutive_replies(options):
    turns = [
        ("What is two plus two?", "Answer briefly."),
        ("Name a colour.", "Answer with one word."),
        ("Where is the Eiffel tower?", "Be helpful."),
        ("How many legs has a spider?", "Count carefully."),
        ("Say goodbye.", "Be polite."),
        ("Say hello again.", "Be cheerful."),
    ]
    async with realtime_session(options) as (session, log):
        for number, (question, instructions) in enumerate(turns, start=1):
            await add_user_message(session, question)
            mark = len(log.events)
            generation = await session.generate_reply(instructions=instructions)
            reply = await collect(generation)
            response = await log.response_done(mark)
            assert response["status"] == "completed", f"turn {number}: {response['status']}"
            assert question.rstrip("?.") in reply.text, f"turn {number}: the reply to {question!r} was {reply.text!r}"
            assert roles(session) == ["user", "assistant"] * number, f"turn {number}: conversation roles {roles(session)}"


async def spoken_turn(options):
    """The user speaks; the server's turn detection answers on its own, as in a LiveKit room."""
    async with realtime_session(options) as (session, log):
        generations, transcripts = [], []
        session.on("generation_created", generations.append)
        session.on("input_audio_transcription_completed", lambda event: transcripts.append(event.transcript))

        async def push(frame):
            session.push_audio(rtc.AudioFrame(frame, harness.RATE, 1, len(frame) // 2))

        async with harness.Microphone(push) as mic:
            await mic.say(harness.silence(300) + harness.speech(900))
            response = await log.response_done()
        assert response["status"] == "completed", response["status"]
        assert transcripts == [options.spoken], f"transcripts {transcripts}"
        assert len(generations) == 1 and not generations[0].user_initiated, f"generations {generations}"
        reply = await collect(generations[0])
        assert options.spoken in reply.text, reply.text
        assert roles(session) == ["user", "assistant"], f"conversation roles {roles(session)}"


async def interruption(options):
    async with realtime_session(options) as (session, log):
        await add_user_message(session, "Tell me a long story.")
        generation = await session.generate_reply()
        interrupted = asyncio.Event()

        async def interrupt_after_half_a_second(message, reply):
            if reply.audio_milliseconds >= 500 and not interrupted.is_set():
                interrupted.set()
                session.interrupt()
                session.truncate(message_id=message.message_id, modalities=["audio", "text"], audio_end_ms=500)

        mark = len(log.events)
        await collect(generation, on_audio=interrupt_after_half_a_second)
        assert interrupted.is_set(), "the story ended before it could be interrupted"
        response = await log.response_done(mark)
        assert response["status"] == "cancelled", f"the story {response['status']}: {harness.transcript(response)[-120:]!r} {log.types(mark)}"
        await log.wait_for_type("conversation.item.truncated", mark)
        # The conversation goes on in order.
        await add_user_message(session, "Are you still there?")
        reply = await collect(await session.generate_reply())
        assert "Are you still there" in reply.text, reply.text
        assert roles(session) == ["user", "assistant", "user", "assistant"], f"conversation roles {roles(session)}"


async def tool_round_trip(options, tool_choice):
    async with realtime_session(options) as (session, log):
        await session.update_tools([get_weather])
        # The question does not mention the weather: only `tool_choice` makes the model call the tool.
        await add_user_message(session, "Where should I travel next?")
        reply = await collect(await session.generate_reply(tool_choice=tool_choice))
        assert [call.name for call in reply.function_calls] == ["get_weather"], f"function calls {reply.function_calls}"
        call = reply.function_calls[0]
        chat_ctx = session.chat_ctx.copy()
        chat_ctx.insert(llm.FunctionCallOutput(call_id=call.call_id, name=call.name, output="sunny in Paris", is_error=False))
        await session.update_chat_ctx(chat_ctx)
        mark = len(log.events)
        answer = await collect(await session.generate_reply())
        assert "sunny" in answer.text, f"the reply after the tool was {answer.text!r}: {log.types(mark)}"


async def tool_call(options):
    await tool_round_trip(options, "required")


async def tool_call_named(options):
    await tool_round_trip(options, {"type": "function", "function": {"name": "get_weather"}})


if __name__ == "__main__":
    harness.run({
        "consecutive_replies": consecutive_replies,
        "spoken_turn": spoken_turn,
        "interruption": interruption,
        "tool_call": tool_call,
        "tool_call_named": tool_call_named,
    })
