"""The client side of the `webrtc` benchmark area (Benchmarks/ParleyBenchmarks/WebRTCBenchmarks.swift).

latency: TURNS spoken turns over one connection, by WebRTC (aiortc: Opus on the track, events on
  the `oai-events` data channel) or by WebSocket (base64 pcm16 events); prints one line per turn,
  `turn MS`: from the last frame of speech leaving the client to the first frame of the answer's
  audio arriving at it. Both send 1 s of speech in real-time 20 ms frames, then silence.
capacity: one trial of the capacity search: CALLS concurrent WebRTC calls from PROCESSES load
  processes (calls split evenly, all of a process's calls on its one event loop), each speaking
  1 s in every 4 s (turns spread evenly over the 4 s) for SECONDS; prints `connected N` once all
  are up, `held` when the last turn was spoken and every answer is in (or 5 s passed), then
  `result {json}`: turns, answered, voice-to-voice per turn, lost answer packets, the longest gap
  inside an answer, the load peers' own lag (how late their loops sent a frame) and CPU seconds.
  The load peers are light on purpose: Opus is encoded once, before the trial, and sent as is;
  received packets are counted and timed, never decoded.
"""
import argparse
import asyncio
import base64
import fractions
import json
import multiprocessing
import sys
import time
import urllib.request

import aioice.ice
import av
import numpy as np
import websockets
from aiortc import MediaStreamTrack, RTCPeerConnection, RTCSessionDescription
from aiortc.codecs.opus import OpusEncoder
from aiortc.rtcrtpreceiver import RTCRtpReceiver

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


# The capacity trial's load peers.

TURN_PERIOD = 4.0
# How long after its speech a turn may wait for its answer's first packet before it counts as unanswered.
ANSWER_WAIT = 5.0


def encoded(samples):
    """48 kHz mono int16 samples as Opus payloads of 20 ms (aiortc's own encoder, as a call sends them)."""
    encoder = OpusEncoder()
    payloads = []
    for offset in range(0, len(samples) - 959, 960):
        frame = av.AudioFrame(format="s16", layout="mono", samples=960)
        frame.planes[0].update(samples[offset:offset + 960].tobytes())
        frame.pts, frame.sample_rate, frame.time_base = offset, 48_000, fractions.Fraction(1, 48_000)
        payloads += encoder.encode(frame)[0]
    return payloads


class PreEncodedMicrophone(MediaStreamTrack):
    """Sends pre-encoded Opus: silence, and the speech at each turn's start; records when each
    turn's last speech frame left and how late the loop was for any frame."""

    kind = "audio"

    def __init__(self, speech_payloads, silence_payload, record):
        super().__init__()
        self.speech, self.silence, self.record = speech_payloads, silence_payload, record
        self.turn_starts = []  # wall-clock times
        self.start = None
        self.index = 0
        self.queue = []

    async def recv(self):
        if self.start is None:
            self.start = time.time()
        due = self.start + self.index * 0.02
        wait = due - time.time()
        if wait > 0:
            await asyncio.sleep(wait)
        else:
            self.record.lag = max(self.record.lag, -wait)
        if self.turn_starts and due >= self.turn_starts[0]:
            self.turn_starts.pop(0)
            self.queue = list(self.speech)
        if self.queue:
            payload = self.queue.pop(0)
            if not self.queue:
                self.record.speech_ended(time.monotonic())
        else:
            payload = self.silence
        packet = av.Packet(payload)
        packet.pts, packet.time_base = self.index * 960, fractions.Fraction(1, 48_000)
        self.index += 1
        return packet


class CallRecord:
    """What one load call saw: its turns' voice-to-voice times and the answers' packets."""

    def __init__(self):
        self.lag = 0.0
        self.turns = []  # [speech end, first answer packet or None]
        self.lost = 0
        self.longest_gap = 0.0
        self.last_sequence = None
        self.last_arrival = None

    def speech_ended(self, at):
        self.turns.append([at, None])

    def packet(self, sequence, marker, at):
        """An answer packet arrived: the first after a turn's speech answers it; inside an
        answer (no marker bit) the gap since the previous one and missing numbers count."""
        if self.turns and self.turns[-1][1] is None:
            self.turns[-1][1] = at
        if self.last_sequence is not None:
            missing = (sequence - self.last_sequence - 1) % 65_536
            if missing < 1_000:
                self.lost += missing
            if not marker:
                self.longest_gap = max(self.longest_gap, at - self.last_arrival)
        self.last_sequence, self.last_arrival = sequence, at


RECORDS = {}


async def counted_rtp_packet(receiver, packet, arrival_time_ms):
    """Stands in for aiortc's receiver handling in load processes: count and time the packet, decode nothing."""
    record = RECORDS.get(id(receiver))
    if record is not None:
        record.packet(packet.sequence_number, packet.marker, time.monotonic())


async def open_load_call(url, token, microphone, record):
    pc = RTCPeerConnection()
    pc.addTrack(microphone)
    for receiver in pc.getReceivers():
        RECORDS[id(receiver)] = record
    channel = pc.createDataChannel("oai-events")
    opened = asyncio.get_running_loop().create_future()

    @channel.on("message")
    def message(text):
        if not opened.done() and json.loads(text).get("type") == "session.created":
            opened.set_result(True)

    await pc.setLocalDescription(await pc.createOffer())

    def post():
        request = urllib.request.Request(url, data=pc.localDescription.sdp.encode(), method="POST",
                                         headers={"Authorization": f"Bearer {token}", "Content-Type": "application/sdp"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.read().decode()

    answer = await asyncio.to_thread(post)
    await pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))
    await asyncio.wait_for(opened, 60)
    return pc


async def load_process_calls(options, first, count, total, connected, go, start_value):
    RTCRtpReceiver._handle_rtp_packet = counted_rtp_packet
    speech_payloads = encoded(np.concatenate([np.zeros(48_000, dtype=np.int16), speech(48_000)]))[50:]
    silence_payload = encoded(np.zeros(48_000, dtype=np.int16))[-1]
    records = [CallRecord() for _ in range(count)]
    microphones = [PreEncodedMicrophone(speech_payloads, silence_payload, record) for record in records]
    pending = list(zip(microphones, records))
    pcs = []
    for batch in range(0, count, 10):
        pcs += await asyncio.gather(*[open_load_call(options.url, options.token, m, r) for m, r in pending[batch:batch + 10]])
    connected.put(count)
    await asyncio.to_thread(go.wait)
    start = start_value.value
    cpu_before = time.process_time()
    # Turns on the clock shared by every process, spread evenly over the turn period.
    for index, (microphone, record) in enumerate(pending):
        offset = TURN_PERIOD * (first + index) / total
        microphone.turn_starts = [start + offset + k * TURN_PERIOD for k in range(int(options.seconds // TURN_PERIOD) + 1)
                                  if offset + k * TURN_PERIOD + 1 < options.seconds]
        record.lag = 0.0
    await asyncio.sleep(max(0.0, start + options.seconds - time.time()))
    deadline = time.monotonic() + ANSWER_WAIT
    while time.monotonic() < deadline and any(turn[1] is None for record in records for turn in record.turns):
        await asyncio.sleep(0.1)
    cpu = time.process_time() - cpu_before
    result = {
        "turns": sum(len(r.turns) for r in records),
        "answered": sum(1 for r in records for turn in r.turns if turn[1] is not None),
        "voice_to_voice_ms": [(turn[1] - turn[0]) * 1000 for r in records for turn in r.turns if turn[1] is not None],
        "lost_packets": sum(r.lost for r in records),
        "longest_gap_ms": max((r.longest_gap for r in records), default=0) * 1000,
        "peer_lag_ms": max((r.lag for r in records), default=0) * 1000,
        "peer_cpu_seconds": cpu,
    }
    await asyncio.gather(*[pc.close() for pc in pcs])
    return result


def load_process(options, first, count, total, connected, go, start_value, results):
    try:
        results.put(asyncio.run(load_process_calls(options, first, count, total, connected, go, start_value)))
    except BaseException as error:  # noqa: BLE001 - the parent reports it
        connected.put(f"{type(error).__name__}: {error}")
        results.put({"error": f"{type(error).__name__}: {error}"})


def capacity(options):
    context = multiprocessing.get_context("fork")
    connected, results, go = context.Queue(), context.Queue(), context.Event()
    start_value = context.Value("d", 0.0)
    shares = [options.calls // options.processes + (1 if i < options.calls % options.processes else 0) for i in range(options.processes)]
    processes, first = [], 0
    for share in shares:
        if share == 0:
            continue
        process = context.Process(target=load_process, args=(options, first, share, options.calls, connected, go, start_value, results))
        process.start()
        processes.append(process)
        first += share
    count = 0
    for _ in processes:
        reply = connected.get(timeout=600)
        if isinstance(reply, str):
            print(f"failed {reply}", flush=True)
        else:
            count += reply
    print(f"connected {count}", flush=True)
    start_value.value = time.time() + 0.2
    go.set()
    replies = [results.get(timeout=options.seconds + 120) for _ in processes]
    print("held", flush=True)
    for process in processes:
        process.join(30)
    errors = [reply["error"] for reply in replies if "error" in reply]
    merged = {"calls": count, "errors": errors}
    for key in ["turns", "answered", "lost_packets", "peer_cpu_seconds"]:
        merged[key] = sum(reply.get(key, 0) for reply in replies)
    for key in ["longest_gap_ms", "peer_lag_ms"]:
        merged[key] = max((reply.get(key, 0) for reply in replies), default=0)
    merged["voice_to_voice_ms"] = [value for reply in replies for value in reply.get("voice_to_voice_ms", [])]
    print("result " + json.dumps(merged), flush=True)


async def main(options):
    if options.transport == "webrtc":
        await webrtc_latency(options)
    else:
        await websocket_latency(options)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["latency", "capacity"])
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--transport", choices=["webrtc", "websocket"], default="webrtc")
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--processes", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=20)
    arguments = parser.parse_args()
    if arguments.mode == "capacity":
        capacity(arguments)
    else:
        asyncio.run(main(arguments))
