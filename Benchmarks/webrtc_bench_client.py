"""The client side of the `webrtc` benchmark area (Benchmarks/ParleyBenchmarks/WebRTCBenchmarks.swift).

latency: TURNS spoken turns over one connection, by WebRTC (aiortc: Opus on the track, events on
  the `oai-events` data channel) or by WebSocket (base64 pcm16 events); prints one line per turn,
  `turn MS`: from the last frame of speech leaving the client to the first frame of the answer's
  audio arriving at it. Both send 1 s of speech in real-time 20 ms frames, then silence.
load: CALLS concurrent WebRTC calls, each speaking 1 s in every 4 s, held for SECONDS; prints
  `connected N` once all are up and `done` at the end.
"""
import argparse
import asyncio
import base64
import fractions
import json
import sys
import time
import urllib.request

import aioice.ice
import av
import numpy as np
import websockets
from aiortc import MediaStreamTrack, RTCPeerConnection, RTCSessionDescription

aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: ["127.0.0.1"] if use_ipv4 else []

SPEECH_SECONDS = 1.0


def speech(rate):
    """1 s of a voiced-sounding tone (what the energy VAD hears as speech)."""
    t = np.arange(int(rate * SPEECH_SECONDS)) / rate
    return (6000 * np.sin(2 * np.pi * 220 * t) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t))).astype(np.int16)


class Microphone(MediaStreamTrack):
    """Silence, and speech when asked; records when the last frame of speech left."""

    kind = "audio"

    def __init__(self):
        super().__init__()
        self.queue = np.zeros(0, dtype=np.int16)
        self.timestamp = 0
        self.start = None
        self.speech_ended_at = None

    def say(self):
        self.queue = speech(48_000)
        self.speech_ended_at = None

    async def recv(self):
        if self.start is None:
            self.start = time.time()
        wait = self.start + self.timestamp / 48_000 - time.time()
        if wait > 0:
            await asyncio.sleep(wait)
        chunk, self.queue = self.queue[:960], self.queue[960:]
        if len(chunk) and not len(self.queue):
            self.speech_ended_at = time.monotonic()
        chunk = np.concatenate([chunk, np.zeros(960 - len(chunk), dtype=np.int16)])
        frame = av.AudioFrame(format="s16", layout="mono", samples=960)
        frame.planes[0].update(chunk.tobytes())
        frame.pts, frame.sample_rate, frame.time_base = self.timestamp, 48_000, fractions.Fraction(1, 48_000)
        self.timestamp += 960
        return frame


async def open_call(url, token, on_event=None, on_audio=None):
    pc = RTCPeerConnection()
    microphone = Microphone()
    pc.addTrack(microphone)
    channel = pc.createDataChannel("oai-events")
    opened = asyncio.get_running_loop().create_future()

    @channel.on("message")
    def message(text):
        event = json.loads(text)
        if event.get("type") == "session.created" and not opened.done():
            opened.set_result(True)
        if on_event:
            on_event(event)

    @pc.on("track")
    def track(remote):
        async def pull():
            while True:
                try:
                    await remote.recv()
                except Exception:  # noqa: BLE001 - the track ended
                    return
                if on_audio:
                    on_audio()
        asyncio.ensure_future(pull())

    await pc.setLocalDescription(await pc.createOffer())

    def post():
        request = urllib.request.Request(url, data=pc.localDescription.sdp.encode(), method="POST",
                                         headers={"Authorization": f"Bearer {token}", "Content-Type": "application/sdp"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.read().decode()

    answer = await asyncio.to_thread(post)
    await pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))
    await asyncio.wait_for(opened, 30)
    return pc, microphone


async def webrtc_latency(options):
    state = {"waiting": None, "result": None, "done": asyncio.Event()}
    loop = asyncio.get_running_loop()

    def on_audio():
        if state["waiting"] and state["waiting"].speech_ended_at and state["result"] is None:
            state["result"] = time.monotonic() - state["waiting"].speech_ended_at
            loop.call_soon(state["done"].set)

    def on_event(event):
        if event.get("type") == "output_audio_buffer.stopped":
            state["stopped"].set()

    pc, microphone = await open_call(options.url, options.token, on_event, on_audio)
    for _ in range(options.turns):
        state.update(waiting=microphone, result=None, done=asyncio.Event(), stopped=asyncio.Event())
        microphone.say()
        await asyncio.wait_for(state["done"].wait(), 30)
        print(f"turn {state['result'] * 1000:.1f}", flush=True)
        await asyncio.wait_for(state["stopped"].wait(), 30)
        await asyncio.sleep(0.5)
    await pc.close()


async def websocket_latency(options):
    url = options.url.replace("http://", "ws://").replace("/v1/realtime/calls", "/v1/realtime")
    async with websockets.connect(url, additional_headers={"Authorization": f"Bearer {options.token}"}, max_size=None, compression=None) as socket:
        for _ in range(options.turns):
            # Silence first, as the call's track has before each turn (the VAD learns the floor).
            samples = np.concatenate([np.zeros(24_000, dtype=np.int16), speech(24_000), np.zeros(24_000 * 2, dtype=np.int16)])
            start = time.time()
            ended_at = None
            first_audio = None
            frame_index = 0

            async def sender():
                nonlocal ended_at, frame_index
                for offset in range(0, len(samples), 480):
                    wait = start + frame_index * 0.02 - time.time()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    chunk = samples[offset:offset + 480]
                    await socket.send(json.dumps({"type": "input_audio_buffer.append", "audio": base64.b64encode(chunk.tobytes()).decode()}, separators=(",", ":")))
                    if offset + 480 >= 48_000 and ended_at is None:
                        ended_at = time.monotonic()
                    frame_index += 1

            sending = asyncio.ensure_future(sender())
            while True:
                event = json.loads(await asyncio.wait_for(socket.recv(), 30))
                if event["type"] == "response.output_audio.delta" and first_audio is None and ended_at is not None:
                    first_audio = time.monotonic()
                if event["type"] == "response.done":
                    break
            await sending
            print(f"turn {(first_audio - ended_at) * 1000:.1f}", flush=True)


async def load(options):
    calls = await asyncio.gather(*[open_call(options.url, options.token) for _ in range(options.calls)])
    print(f"connected {len(calls)}", flush=True)
    end = time.time() + options.seconds
    while time.time() < end:
        for _, microphone in calls:
            microphone.say()
        await asyncio.sleep(4)
    print("done", flush=True)
    await asyncio.gather(*[pc.close() for pc, _ in calls])


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["latency", "load"])
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--transport", choices=["webrtc", "websocket"], default="webrtc")
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=20)
    options = parser.parse_args()
    if options.mode == "load":
        await load(options)
    elif options.transport == "webrtc":
        await webrtc_latency(options)
    else:
        await websocket_latency(options)


if __name__ == "__main__":
    asyncio.run(main())
