"""The client side of the `webrtc` benchmark area (Benchmarks/ParleyBenchmarks/WebRTCBenchmarks.swift).

latency: TURNS spoken turns over one connection, by WebRTC (aiortc: Opus on the track, events on
  the `oai-events` data channel) or by WebSocket (base64 pcm16 events); prints one line per turn,
  `turn MS`: from the last frame of speech leaving the client to the first frame of the answer's
  audio arriving at it. Both send the speech (below) in real-time 20 ms frames, then silence. By
  WebRTC each turn also prints `reply MS`: from the answer's first audio to `output_audio_buffer.stopped`
  (how long the reply holds the line), and waits for it before the next turn.
capacity: one trial of the capacity search: CALLS concurrent WebRTC calls from PROCESSES load
  processes (calls split evenly, all of a process's calls on its one event loop), each speaking
  once in every TURN_PERIOD s (turns spread evenly over the period) for SECONDS; prints
  `connected N` once all are up, `held` when the last turn was spoken and every answer is in (or
  5 s passed), then `result {json}`: turns, answered, voice-to-voice per turn, lost answer
  packets, the longest gap inside an answer's talkspurts and the longest pause between them,
  turns the agent talked over, the load peers' own lag (how late their loops sent a frame) and
  CPU seconds. The load peers are light on purpose: Opus is encoded once, before the trial, and
  sent as is; received packets are counted and timed, never decoded.

The speech is 1 s of a 220 Hz tone (what the energy VAD hears as speech), or on WebRTC calls with
--speech-wav a spoken question (a 48 kHz mono 16-bit WAV) up to its last voiced sample: the frame
holding that sample is the turn's last speech frame.
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
import wave

import aioice.ice
import av
import numpy as np
import websockets
from aiortc import MediaStreamTrack, RTCPeerConnection, RTCSessionDescription
from aiortc.codecs.opus import OpusEncoder
from aiortc.rtcrtpreceiver import RTCRtpReceiver

aioice.ice.get_host_addresses = lambda use_ipv4, use_ipv6: ["127.0.0.1"] if use_ipv4 else []

SPEECH_SECONDS = 1.0
# A sample louder than this (-36 dBFS, 0.016 of full scale) is voiced: the last one ends the
# caller's speech (the Swift benchmarks' `EndOfSpeech` rule).
VOICED_LEVEL = 524


def speech(rate):
    """1 s of a voiced-sounding tone (what the energy VAD hears as speech)."""
    t = np.arange(int(rate * SPEECH_SECONDS)) / rate
    return (6000 * np.sin(2 * np.pi * 220 * t) * (1 + 0.5 * np.sin(2 * np.pi * 3 * t))).astype(np.int16)


def spoken_question(path):
    """A 48 kHz mono 16-bit WAV's samples up to its last voiced sample (trailing quiet dropped)."""
    with wave.open(path, "rb") as wav:
        if (wav.getframerate(), wav.getnchannels(), wav.getsampwidth()) != (48_000, 1, 2):
            raise SystemExit(f"{path}: need a 48 kHz mono 16-bit WAV")
        samples = np.frombuffer(wav.readframes(wav.getnframes()), dtype="<i2").astype(np.int16)
    voiced = np.flatnonzero(np.abs(samples.astype(np.int32)) > VOICED_LEVEL)
    if not len(voiced):
        raise SystemExit(f"{path}: no voiced sample")
    return samples[:voiced[-1] + 1]


def caller_speech(options):
    """What each turn says at 48 kHz: the --speech-wav question, or the tone."""
    return spoken_question(options.speech_wav) if options.speech_wav else speech(48_000)


class Microphone(MediaStreamTrack):
    """Silence, and speech when asked; records when the last frame of speech left."""

    kind = "audio"

    def __init__(self):
        super().__init__()
        self.queue = np.zeros(0, dtype=np.int16)
        self.timestamp = 0
        self.start = None
        self.speech_ended_at = None

    def say(self, samples):
        self.queue = samples
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
    samples = caller_speech(options)

    def on_audio():
        if state["waiting"] and state["waiting"].speech_ended_at and state["result"] is None:
            state["first_audio"] = time.monotonic()
            state["result"] = state["first_audio"] - state["waiting"].speech_ended_at
            loop.call_soon(state["done"].set)

    def on_event(event):
        if event.get("type") == "output_audio_buffer.stopped":
            state["stopped_at"] = time.monotonic()
            state["stopped"].set()

    pc, microphone = await open_call(options.url, options.token, on_event, on_audio)
    for _ in range(options.turns):
        state.update(waiting=microphone, result=None, done=asyncio.Event(), stopped=asyncio.Event())
        microphone.say(samples)
        await asyncio.wait_for(state["done"].wait(), 30)
        print(f"turn {state['result'] * 1000:.1f}", flush=True)
        await asyncio.wait_for(state["stopped"].wait(), 30)
        print(f"reply {(state['stopped_at'] - state['first_audio']) * 1000:.1f}", flush=True)
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

# How long after its speech a turn may wait for its answer's first packet before it counts as unanswered.
ANSWER_WAIT = 5.0
# Frames of the encoder's own silence sent after a turn's last speech frame, so the question's
# end decodes whole (Opus looks a few milliseconds ahead) before the pre-encoded silence.
SPEECH_TAIL_FRAMES = 2


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


def encoded_turn(samples):
    """A turn's payloads and the index of its last speech frame (the one holding the last sample
    of `samples`): the speech padded to whole frames, then SPEECH_TAIL_FRAMES of silence, encoded
    after 1 s of silence (dropped) so the encoder starts the speech settled, as a live call's does."""
    frames = -(-len(samples) // 960)
    padded = np.concatenate([
        np.zeros(48_000, dtype=np.int16), samples,
        np.zeros(frames * 960 - len(samples) + SPEECH_TAIL_FRAMES * 960, dtype=np.int16),
    ])
    return encoded(padded)[50:], frames - 1


class PreEncodedMicrophone(MediaStreamTrack):
    """Sends pre-encoded Opus: silence, and the turn's payloads at each turn's start; records when
    each turn's speech began and its last speech frame left, and how late the loop was for any frame."""

    kind = "audio"

    def __init__(self, turn_payloads, last_speech_frame, silence_payload, record):
        super().__init__()
        self.turn, self.last_speech_frame = turn_payloads, last_speech_frame
        self.silence, self.record = silence_payload, record
        self.turn_starts = []  # wall-clock times
        self.start = None
        self.index = 0
        self.sent = None  # frames of the current turn sent, None between turns

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
            self.sent = 0
            self.record.speech_started()
        if self.sent is not None:
            payload = self.turn[self.sent]
            if self.sent == self.last_speech_frame:
                self.record.speech_ended(time.monotonic())
            self.sent += 1
            if self.sent == len(self.turn):
                self.sent = None
        else:
            payload = self.silence
        packet = av.Packet(payload)
        packet.pts, packet.time_base = self.index * 960, fractions.Fraction(1, 48_000)
        self.index += 1
        return packet


class CallRecord:
    """What one load call saw: its turns' voice-to-voice times and the answers' packets.

    The server sends an answer as talkspurts: 20 ms frames back to back, and nothing while it has
    no audio queued (a sentence whose synthesis is not in yet), the next frame then starting a new
    talkspurt (the RTP marker bit). A gap inside a talkspurt is what a receiver's jitter buffer
    must hide; a pause between talkspurts is heard as a longer pause between the agent's words."""

    def __init__(self):
        self.lag = 0.0
        self.turns = []  # [speech end, first answer packet or None]
        self.lost = 0
        self.longest_gap = 0.0
        self.longest_pause = 0.0
        self.talked_over = 0
        self.speaking = False
        self.talked_over_this_turn = False
        self.last_sequence = None
        self.last_arrival = None

    def speech_started(self):
        self.speaking, self.talked_over_this_turn = True, False

    def speech_ended(self, at):
        self.speaking = False
        self.turns.append([at, None])

    def packet(self, sequence, marker, at):
        """An answer packet arrived: the first after a turn's speech answers it; one while the
        caller speaks means the agent talked over this turn (the turn period did not leave room
        for the last reply, or the agent answered mid-question); after it, missing numbers count,
        and the time since the previous packet is a gap inside a talkspurt (no marker bit) or a
        pause between two of one answer's."""
        first_of_answer = bool(self.turns) and self.turns[-1][1] is None and not self.speaking
        if first_of_answer:
            self.turns[-1][1] = at
        if self.speaking and not self.talked_over_this_turn:
            self.talked_over_this_turn = True
            self.talked_over += 1
        if self.last_sequence is not None:
            missing = (sequence - self.last_sequence - 1) % 65_536
            if missing < 1_000:
                self.lost += missing
            if not marker:
                self.longest_gap = max(self.longest_gap, at - self.last_arrival)
            elif not first_of_answer:
                self.longest_pause = max(self.longest_pause, at - self.last_arrival)
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
    turn_payloads, last_speech_frame = encoded_turn(caller_speech(options))
    speech_seconds = (last_speech_frame + 1) * 0.02
    silence_payload = encoded(np.zeros(48_000, dtype=np.int16))[-1]
    records = [CallRecord() for _ in range(count)]
    microphones = [PreEncodedMicrophone(turn_payloads, last_speech_frame, silence_payload, record) for record in records]
    pending = list(zip(microphones, records))
    pcs = []
    for batch in range(0, count, 10):
        pcs += await asyncio.gather(*[open_load_call(options.url, options.token, m, r) for m, r in pending[batch:batch + 10]])
    connected.put(count)
    await asyncio.to_thread(go.wait)
    start = start_value.value
    cpu_before = time.process_time()
    # Turns on the clock shared by every process, spread evenly over the turn period; a turn
    # whose speech would not end within the trial is not spoken.
    period = options.turn_period
    for index, (microphone, record) in enumerate(pending):
        offset = period * (first + index) / total
        microphone.turn_starts = [start + offset + k * period for k in range(int(options.seconds // period) + 1)
                                  if offset + k * period + speech_seconds < options.seconds]
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
        "longest_pause_ms": max((r.longest_pause for r in records), default=0) * 1000,
        "talked_over": sum(r.talked_over for r in records),
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
    for key in ["turns", "answered", "lost_packets", "talked_over", "peer_cpu_seconds"]:
        merged[key] = sum(reply.get(key, 0) for reply in replies)
    for key in ["longest_gap_ms", "longest_pause_ms", "peer_lag_ms"]:
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
    parser.add_argument("--turn-period", type=float, default=4.0,
                        help="capacity: seconds from one turn's start to the next's, room for the question and the whole reply")
    parser.add_argument("--speech-wav", help="a spoken question to say instead of the tone (48 kHz mono 16-bit WAV)")
    arguments = parser.parse_args()
    if arguments.speech_wav and arguments.transport == "websocket":
        parser.error("--speech-wav is for WebRTC calls")
    if arguments.mode == "capacity":
        capacity(arguments)
    else:
        asyncio.run(main(arguments))
