#!/usr/bin/env python3
"""The Parley benchmark's voice pipeline built with Pipecat, for a side-by-side comparison.

Pipecat's best honest configuration on this machine: one uvicorn worker process per core (by
default), each on uvloop, all accepting from one listening socket the parent bound; every
WebSocket connection to /ws gets its own Pipecat pipeline:

    FastAPIWebsocketTransport (ProtobufFrameSerializer, pcm16)
      -> OpenAISTTService -> user context aggregator (Silero VAD) -> OpenAILLMService
      -> OpenAITTSService -> transport output -> assistant context aggregator

All three services point at the same OpenAI-compatible fake upstream as Parley's. The turn
ends after the same silence window Parley uses (VAD stop_secs, no extra speech timeout).
Prints "listening on ws://HOST:PORT/ws" once it accepts connections.
"""

import argparse
import asyncio
import os
import signal
import socket
import sys

import uvicorn
import uvloop
from fastapi import FastAPI, WebSocket
from loguru import logger
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADParams
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.worker import PipelineParams, PipelineWorker
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.serializers.protobuf import ProtobufFrameSerializer
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.services.openai.stt import OpenAISTTService
from pipecat.services.openai.tts import OpenAITTSService
from pipecat.transports.websocket.fastapi import FastAPIWebsocketParams, FastAPIWebsocketTransport
from pipecat.turns.user_stop import SpeechTimeoutUserTurnStopStrategy
from pipecat.turns.user_turn_strategies import UserTurnStrategies
from pipecat.workers.runner import WorkerRunner

INSTRUCTIONS = "You are a helpful voice assistant. Answer briefly, in one or two short sentences."


def build_app(args):
    app = FastAPI()

    @app.websocket("/ws")
    async def session(websocket: WebSocket):
        await websocket.accept()
        await run_pipeline(websocket, args)

    return app


async def run_pipeline(websocket, args):
    transport = FastAPIWebsocketTransport(
        websocket=websocket,
        params=FastAPIWebsocketParams(
            audio_in_enabled=True,
            audio_out_enabled=True,
            add_wav_header=False,
            serializer=ProtobufFrameSerializer(),
        ),
    )
    stt = OpenAISTTService(
        api_key="benchmark",
        base_url=args.upstream,
        settings=OpenAISTTService.Settings(model="whisper-1"),
    )
    llm = OpenAILLMService(
        api_key="benchmark",
        base_url=args.upstream,
        settings=OpenAILLMService.Settings(model="fake-llm", system_instruction=INSTRUCTIONS),
    )
    tts = OpenAITTSService(
        api_key="benchmark",
        base_url=args.upstream,
        sample_rate=24_000,
        settings=OpenAITTSService.Settings(model="tts-1", voice="alloy"),
    )
    context = LLMContext()
    user_aggregator, assistant_aggregator = LLMContextAggregatorPair(
        context,
        user_params=LLMUserAggregatorParams(
            vad_analyzer=SileroVADAnalyzer(params=VADParams(confidence=args.vad_confidence, stop_secs=args.silence_ms / 1000)),
            user_turn_strategies=UserTurnStrategies(
                stop=[SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0.0)],
            ),
        ),
    )
    pipeline = Pipeline(
        [
            transport.input(),
            stt,
            user_aggregator,
            llm,
            tts,
            transport.output(),
            assistant_aggregator,
        ]
    )
    worker = PipelineWorker(
        pipeline,
        params=PipelineParams(audio_in_sample_rate=16_000, audio_out_sample_rate=24_000),
    )
    runner = WorkerRunner(handle_sigint=False)

    @transport.event_handler("on_client_disconnected")
    async def on_client_disconnected(transport, client):
        await runner.cancel()

    await runner.add_workers(worker)
    await runner.run()


async def serve(args, listener):
    config = uvicorn.Config(build_app(args), log_level="warning", ws="websockets", backlog=4096, loop="uvloop")
    server = uvicorn.Server(config)
    await server.serve(sockets=[listener])


def run_workers(args):
    """Binds the listening socket, forks one worker per `--workers`, and waits for them; a
    SIGTERM to this process stops them all."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((args.host, args.port))
    listener.listen(4096)
    port = listener.getsockname()[1]
    children = []
    for _ in range(args.workers):
        pid = os.fork()
        if pid == 0:
            uvloop.install()
            asyncio.run(serve(args, listener))
            os._exit(0)
        children.append(pid)

    def stop(signum, frame):
        for child in children:
            os.kill(child, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"listening on ws://{args.host}:{port}/ws", flush=True)
    for child in children:
        os.waitpid(child, 0)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--upstream", required=True, help="OpenAI-compatible base URL, e.g. http://127.0.0.1:9000/v1")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--silence-ms", type=int, default=300, help="silence that ends the user's turn")
    parser.add_argument("--vad-confidence", type=float, default=0.7, help="Silero probability that counts as speech")
    parser.add_argument("--log-level", default="WARNING", help="loguru level (Pipecat logs DEBUG by default)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="worker processes (default: one per core)")
    args = parser.parse_args()
    logger.remove()
    logger.add(sys.stderr, level=args.log_level)
    run_workers(args)


if __name__ == "__main__":
    main()
