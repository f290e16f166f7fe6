"""pipecat (`OpenAIRealtimeLLMService` in a minimal pipeline) against Parley.

Each scenario runs a pipeline of the service between two taps that keep every frame, with
Parley's default server-side turn detection unless it says otherwise. Error frames, error
events, failed responses, a `conversation.item.truncated` the service never asked for, and
timeouts fail the scenario. Scenarios: text_turn, spoken_turn, interruption (the server's VAD
hears the user talk over a reply), cancel (push-to-talk: the app interrupts and ends the turn).
"""
import asyncio
import contextlib
import json
import sys

from loguru import logger

from pipecat.frames.frames import (
    ErrorFrame,
    InputAudioRawFrame,
    InterruptionFrame,
    LLMContextFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    UserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.runner import PipelineRunner
from pipecat.pipeline.task import PipelineParams, PipelineTask
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.frame_processor import FrameProcessor
from pipecat.services.openai.realtime import events
from pipecat.services.openai.realtime.llm import OpenAIRealtimeLLMService

import harness

logger.remove()
logger.add(sys.stderr, level="WARNING")

# The service parses each server event with `events.parse_server_event`; this wrapper shows
# the raw events to the scenario's log first.
_parse_server_event = events.parse_server_event
current_log = None


def parse_and_record(message):
    if current_log is not None:
        current_log.record(json.loads(message))
    return _parse_server_event(message)


events.parse_server_event = parse_and_record


class Tap(FrameProcessor):
    """Passes every frame on and keeps it in `frames`."""

    def __init__(self, frames):
        super().__init__()
        self.frames = frames

    async def process_frame(self, frame, direction):
        await super().process_frame(frame, direction)
        self.frames.append(frame)
        await self.push_frame(frame, direction)


class CountingService(OpenAIRealtimeLLMService):
    """The service, counting the client events it sends."""

    def __init__(self, **arguments):
        super().__init__(**arguments)
        self.sent = []

    async def send_client_event(self, event):
        self.sent.append(event.type)
        await super().send_client_event(event)


@contextlib.asynccontextmanager
async def pipeline(options, push_to_talk=False):
    """Runs [tap, service, tap] and yields the service, the frames and the event log."""
    global current_log
    log = current_log = harness.EventLog()
    frames = []
    settings = None
    if push_to_talk:
        no_turn_detection = events.AudioConfiguration(input=events.AudioInput(turn_detection=False))
        settings = OpenAIRealtimeLLMService.Settings(session_properties=events.SessionProperties(audio=no_turn_detection))
    service = CountingService(api_key=options.token, base_url=options.url, settings=settings)
    task = PipelineTask(
        Pipeline([Tap(frames), service, Tap(frames)]),
        params=PipelineParams(audio_in_sample_rate=harness.RATE),
        idle_timeout_secs=None,
        enable_rtvi=False,
    )
    running = asyncio.create_task(PipelineRunner(handle_sigint=False).run(task))
    try:
        await log.wait_for_type("session.updated")
        yield task, service, frames, log
        errors = [frame.error for frame in frames if isinstance(frame, ErrorFrame)]
        assert not errors, f"error frames: {errors}"
        log.check()
        requested, answered = service.sent.count("conversation.item.truncate"), len(log.of_type("conversation.item.truncated"))
        assert answered <= requested, f"{answered} conversation.item.truncated for {requested} truncate requests"
    finally:
        await task.cancel()
        await running
        current_log = None


def microphone(task):
    """A live microphone feeding the pipeline."""
    async def send(frame):
        await task.queue_frame(InputAudioRawFrame(audio=frame, sample_rate=harness.RATE, num_channels=1))

    return harness.Microphone(send)


async def text_turn(options):
    async with pipeline(options) as (task, service, frames, log):
        context = LLMContext(messages=[{"role": "user", "content": "What is two plus two?"}])
        await task.queue_frame(LLMContextFrame(context))
        response = await log.response_done()
        assert response["status"] == "completed", response["status"]
        assert "What is two plus two" in harness.transcript(response), harness.transcript(response)
        assert any(isinstance(frame, TTSAudioRawFrame) for frame in frames), "no audio frames"


async def spoken_turn(options):
    async with pipeline(options) as (task, service, frames, log), microphone(task) as mic:
        await mic.say(harness.silence(300) + harness.speech(900))
        response = await log.response_done()
        assert response["status"] == "completed", response["status"]
        assert options.spoken in harness.transcript(response), harness.transcript(response)
        heard = [frame.text for frame in frames if isinstance(frame, TranscriptionFrame)]
        assert heard == [options.spoken], f"transcription frames {heard}"


async def interruption(options):
    async with pipeline(options) as (task, service, frames, log), microphone(task) as mic:
        context = LLMContext(messages=[{"role": "user", "content": "Tell me a long story."}])
        await task.queue_frame(LLMContextFrame(context))
        story = (await log.wait_for_type("response.created"))["response"]["id"]
        await log.wait_for_type("response.output_audio.delta")
        # The user talks over the story: the server's VAD stops it, the service truncates it.
        mark = len(log.events)
        await mic.say(harness.speech(900, seed=2))
        stopped = await log.wait_for(
            "the story's response.done", lambda event: event["type"] == "response.done" and event["response"]["id"] == story
        )
        assert stopped["response"]["status"] == "cancelled", f"the story {stopped['response']['status']}: {harness.transcript(stopped['response'])[:300]!r} {log.types(mark)}"
        assert "conversation.item.truncate" in service.sent, "the service sent no truncate"
        answer = await log.wait_for(
            "the answer to the interruption",
            lambda event: event["type"] == "response.done" and event["response"]["id"] != story,
            mark,
        )
        assert answer["response"]["status"] == "completed", answer["response"]["status"]


async def cancel(options):
    async with pipeline(options, push_to_talk=True) as (task, service, frames, log), microphone(task) as mic:
        context = LLMContext(messages=[{"role": "user", "content": "Tell me a long story."}])
        await task.queue_frame(LLMContextFrame(context))
        story = (await log.wait_for_type("response.created"))["response"]["id"]
        await log.wait_for_type("response.output_audio.delta")
        # The app decides the user interrupts: the service clears the input, cancels, truncates.
        mark = len(log.events)
        await task.queue_frame(InterruptionFrame())
        stopped = await log.wait_for(
            "the story's response.done", lambda event: event["type"] == "response.done" and event["response"]["id"] == story
        )
        assert stopped["response"]["status"] == "cancelled", f"the story {stopped['response']['status']}: {log.types(mark)}"
        assert service.sent.count("response.cancel") == 1, f"client events {service.sent}"
        # The user speaks and the app ends the turn: the service commits and asks for a reply.
        await mic.say(harness.speech(900, seed=3))
        await task.queue_frame(UserStoppedSpeakingFrame())
        answer = await log.wait_for(
            "the answer", lambda event: event["type"] == "response.done" and event["response"]["id"] != story, mark
        )
        assert answer["response"]["status"] == "completed", answer["response"]["status"]
        assert options.spoken in harness.transcript(answer["response"]), harness.transcript(answer["response"])


if __name__ == "__main__":
    harness.run({"text_turn": text_turn, "spoken_turn": spoken_turn, "interruption": interruption, "cancel": cancel})
