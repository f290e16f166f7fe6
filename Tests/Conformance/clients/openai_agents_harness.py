"""openai-agents (`agents.realtime`: RealtimeRunner, RealtimeAgent, function tools) against Parley.

The SDK validates every server event with the `openai` SDK's models and turns a failure into a
"Failed to validate server event" log and an error event; both fail the scenario here, as do
error events, failed responses and timeouts. Scenarios: text_turns, spoken_question, interrupt
(push-to-talk: the app interrupts), barge_in (server VAD: the user talks over a reply),
tool_auto, tool_required, out_of_band, each in a session of its own.
"""
import asyncio
import contextlib
from dataclasses import dataclass, field

import pydantic
from agents import function_tool
from agents.realtime import RealtimeAgent, RealtimeRunner
from agents.realtime.model_inputs import RealtimeModelSendRawMessage

import harness

LOGGED_ERRORS = harness.ErrorLogRecorder("openai.agents")


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def describe(error):
    if isinstance(error, pydantic.ValidationError):
        return f"Failed to validate server event: {harness.brief(error.errors()[0]['msg'], 120)}"
    return harness.brief(getattr(error, "message", None) or error)


@dataclass
class Conversation:
    """A live RealtimeSession and what it told the application."""
    live: object
    log: harness.EventLog = field(default_factory=harness.EventLog)
    app_events: list = field(default_factory=list)
    history: list = field(default_factory=list)

    async def follow(self):
        try:
            async for event in self.live:
                self.app_events.append(event)
                if event.type == "raw_model_event" and event.data.type == "raw_server_event":
                    self.log.record(event.data.data)
                elif event.type == "error":
                    self.log.problems.append(f"RealtimeError: {describe(event.error)}")
                elif event.type == "history_updated":
                    self.history = list(event.history)
                elif event.type == "history_added":
                    self.history.append(event.item)
        except Exception as error:  # noqa: BLE001 - the session raises what the model reported
            self.log.problems.append(f"session raised {type(error).__name__}: {harness.brief(error)}")

    async def ask(self, text):
        """Sends a typed message and returns the transcript of the completed reply."""
        mark = len(self.log.events)
        await self.live.send_message(text)
        response = await self.log.response_done(mark)
        assert response["status"] == "completed", f"reply to {text!r} is {response['status']}"
        return harness.transcript(response)


@contextlib.asynccontextmanager
async def session(options, **model_settings):
    """A RealtimeRunner session with the `get_weather` tool, checked when it ends."""
    agent = RealtimeAgent(name="Assistant", instructions="You are a test agent.", tools=[get_weather])
    runner = RealtimeRunner(agent, config={"model_settings": model_settings})
    async with await runner.run(model_config={"url": options.url, "api_key": options.token}) as live:
        conversation = Conversation(live)
        follower = asyncio.create_task(conversation.follow())
        logged = len(LOGGED_ERRORS.messages)
        try:
            await conversation.log.wait_for_type("session.updated")
            yield conversation
            conversation.log.check()
            LOGGED_ERRORS.since(logged)
        finally:
            follower.cancel()


async def text_turns(options):
    async with session(options) as conversation:
        for question in ["What is two plus two?", "Name a colour."]:
            said = await conversation.ask(question)
            assert question.rstrip("?.") in said, f"the reply to {question!r} was {said!r}"
        roles = [item.role for item in conversation.history if item.type == "message"]
        assert roles == ["user", "assistant", "user", "assistant"], f"history roles {roles}"


async def spoken_question(options):
    async with session(options) as conversation, harness.Microphone(conversation.live.send_audio) as mic:
        log = conversation.log
        await mic.say(harness.silence(300) + harness.speech(900))
        completed = await log.wait_for_type("conversation.item.input_audio_transcription.completed")
        assert completed["transcript"] == options.spoken, completed["transcript"]
        response = await log.response_done()
        assert response["status"] == "completed", response["status"]
        said = harness.transcript(response)
        assert options.spoken in said, f"the reply to the spoken question was {said!r}"


async def interrupt(options):
    # Push-to-talk (no turn detection): interrupt() truncates what was played and cancels.
    async with session(options, turn_detection=None) as conversation:
        live, log = conversation.live, conversation.log
        mark = len(log.events)
        await live.send_message("Tell me a long story.")
        await log.wait_for_type("response.output_audio.delta", mark)
        await live.interrupt()
        truncated = await log.wait_for_type("conversation.item.truncated", mark)
        response = await log.response_done(mark)
        assert response["status"] == "cancelled", f"the interrupted response is {response['status']}"
        # The session goes on, and the conversation holds the truncated reply.
        said = await conversation.ask("Are you still there?")
        assert "Are you still there" in said, said
        assert truncated["item_id"] in [item.item_id for item in conversation.history], "the truncated item is gone"


async def barge_in(options):
    # Server VAD (the SDK's default): the user talks over a reply; the server stops it.
    async with session(options) as conversation, harness.Microphone(conversation.live.send_audio) as mic:
        live, log = conversation.live, conversation.log
        await mic.say(harness.silence(300))
        await live.send_message("Tell me a long story.")
        story = (await log.wait_for_type("response.created"))["response"]["id"]
        await log.wait_for_type("response.output_audio.delta")
        mark = len(log.events)
        await mic.say(harness.speech(900, seed=2))
        await log.wait_for_type("input_audio_buffer.speech_started", mark)
        stopped = await log.wait_for(
            "the story's response.done", lambda event: event["type"] == "response.done" and event["response"]["id"] == story
        )
        assert stopped["response"]["status"] == "cancelled", f"the story {stopped['response']['status']}: {log.types(mark)}"
        answer = await log.wait_for(
            "the answer", lambda event: event["type"] == "response.done" and event["response"]["id"] != story, mark
        )
        assert answer["response"]["status"] == "completed", answer["response"]["status"]
        assert options.spoken in harness.transcript(answer["response"]), harness.transcript(answer["response"])


async def tool_round_trip(options, question, **model_settings):
    async with session(options, **model_settings) as conversation:
        live, log = conversation.live, conversation.log
        mark = len(log.events)
        await live.send_message(question)
        call = await log.wait_for(
            "a get_weather call",
            lambda event: event["type"] == "response.output_item.done" and event["item"]["type"] == "function_call",
            mark,
        )
        assert call["item"]["name"] == "get_weather", call["item"]
        # The SDK runs the tool, sends its output and asks for the next response itself.
        answer = await log.wait_for(
            "the reply after the tool",
            lambda event: event["type"] == "response.done" and harness.transcript(event["response"]),
            mark,
        )
        said = harness.transcript(answer["response"])
        assert "sunny" in said, f"the reply after the tool was {said!r}"
        assert any(event.type == "tool_end" for event in conversation.app_events), "no tool_end event"


async def tool_auto(options):
    await tool_round_trip(options, "What is the weather in Paris?")


async def tool_required(options):
    # The question does not mention the weather: only `tool_choice` makes the model call the tool.
    await tool_round_trip(options, "Where should I travel next?", tool_choice="required")


async def out_of_band(options):
    """A `response.create` outside the conversation, sent as a raw event through the model."""
    async with session(options) as conversation:
        live, log = conversation.live, conversation.log
        await conversation.ask("What is two plus two?")
        mark = len(log.events)
        metadata = {"purpose": "summary", "client_event_id": "out-of-band-1"}
        request = {
            "conversation": "none",
            "metadata": metadata,
            "output_modalities": ["text"],
            "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Summarize the cat sat on the mat."}]}],
        }
        await live.model.send_event(RealtimeModelSendRawMessage(message={"type": "response.create", "other_data": {"response": request}}))
        created = await log.wait_for_type("response.created", mark)
        assert created["response"].get("metadata") == metadata, f"response.created metadata {created['response'].get('metadata')}"
        response = await log.response_done(mark)
        assert response["status"] == "completed", response["status"]
        assert response.get("metadata") == metadata, f"response.done metadata {response.get('metadata')}"
        assert "Summarize the cat sat on the mat" in harness.transcript(response), harness.transcript(response)
        touched = [event["type"] for event in log.events[mark:] if event["type"].startswith("conversation.item.")]
        assert not touched, f"the out-of-band response touched the conversation: {touched}"
        # The conversation goes on; the Swift test checks what the model was sent.
        said = await conversation.ask("Name a colour.")
        assert "Name a colour" in said, said


if __name__ == "__main__":
    harness.run({
        "text_turns": text_turns,
        "spoken_question": spoken_question,
        "interrupt": interrupt,
        "barge_in": barge_in,
        "tool_auto": tool_auto,
        "tool_required": tool_required,
        "out_of_band": out_of_band,
    })
