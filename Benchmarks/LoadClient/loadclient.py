#!/usr/bin/env python3
"""Load client for the Parley-vs-Pipecat benchmark.

Opens N sessions to one voice-agent server and, in each, streams a real utterance (synthesised
speech followed by silence) paced in real time in 20 ms frames, turn after turn. Per turn it
measures the time from the end of the user's speech to the first byte of agent audio, and to
the last byte of the reply. Over the run it reads the server process's CPU time
(/proc/PID/stat) and resident memory (/proc/PID/status).

Two wire protocols:
  parley   the OpenAI Realtime protocol (JSON events, base64 pcm16 at 24 kHz) at /v1/realtime
  pipecat  Pipecat's protobuf frames (AudioRawFrame, pcm16 at 24 kHz) over its WebSocket transport

Both servers get the same audio at the same rate, from the same client code; the result is
one JSON object on standard output.
"""

import argparse
import asyncio
import base64
import json
import math
import os
import random
import struct
import sys
import time
import wave

from websockets.asyncio.client import connect

FRAME_MS = 20
RATE = 24_000
# A sample louder than this (-36 dBFS, 0.016 of full scale) is voiced: the last one ends the
# user's speech (the Swift benchmarks' `EndOfSpeech` rule).
VOICED_LEVEL = 524
FRAME_SAMPLES = RATE * FRAME_MS // 1000
BYTES_PER_MS = RATE * 2 // 1000
# Handshakes in flight at once while the sessions connect. In one burst of 50, one of a server's
# worker processes can accept most of them at once and set every one up before it answers any,
# and the last ones time out: at N = 50 only 19 of Pipecat's 50 sessions connected, while all 100
# did at N = 100 (a harness artefact). Users arrive a few at a time.
CONNECT_CONCURRENCY = 8


# --- Audio -------------------------------------------------------------------------------------


def voiced_span(samples):
    """The first and the last voiced sample (louder than VOICED_LEVEL) of 16-bit samples; None
    when none is voiced."""
    voiced = [i for i, s in enumerate(samples) if abs(s) > VOICED_LEVEL]
    return (voiced[0], voiced[-1]) if voiced else None


def load_utterance(path, lead_ms, dither_amplitude, seed):
    """The speech of a WAV file at 24 kHz as 20 ms PCM16 frames, from its first voiced sample to
    its last, after `lead_ms` of quiet; and 50 frames of quiet. The last speech frame ends the
    user's turn. A faint dither replaces digital silence."""
    with wave.open(path, "rb") as wav:
        if wav.getsampwidth() != 2 or wav.getnchannels() != 1:
            raise SystemExit(f"{path}: need a 16-bit mono WAV")
        rate = wav.getframerate()
        raw = wav.readframes(wav.getnframes())
    samples = list(struct.unpack(f"<{len(raw) // 2}h", raw))
    span = voiced_span(samples)
    if span is None:
        raise SystemExit(f"{path}: no speech found")
    samples = samples[span[0]:span[1] + 1]
    resampled = resample_linear(samples, rate, RATE)
    rng = random.Random(seed)
    lead = [0] * (RATE * lead_ms // 1000)
    audio = lead + resampled
    speech_frames = (len(audio) + FRAME_SAMPLES - 1) // FRAME_SAMPLES
    audio += [0] * (speech_frames * FRAME_SAMPLES - len(audio))
    audio = [max(-32768, min(32767, s + rng.randint(-dither_amplitude, dither_amplitude))) for s in audio]
    frames = [pack(audio[i:i + FRAME_SAMPLES]) for i in range(0, len(audio), FRAME_SAMPLES)]
    silence = [pack([rng.randint(-dither_amplitude, dither_amplitude) for _ in range(FRAME_SAMPLES)]) for _ in range(50)]
    return frames, silence


def resample_linear(samples, source_rate, target_rate):
    """Linear-interpolation resampling (enough for a voice activity detector and a fake ASR)."""
    if source_rate == target_rate:
        return samples
    count = len(samples) * target_rate // source_rate
    step = source_rate / target_rate
    out = []
    last = len(samples) - 1
    for i in range(count):
        position = i * step
        index = int(position)
        fraction = position - index
        following = samples[min(index + 1, last)]
        out.append(int(samples[index] * (1 - fraction) + following * fraction))
    return out


def pack(samples):
    return struct.pack(f"<{len(samples)}h", *samples)


# --- Wire protocols ----------------------------------------------------------------------------


class ParleyProtocol:
    """OpenAI Realtime: input_audio_buffer.append with base64 audio; audio deltas back."""

    audio_prefix = '{"type":"response.output_audio.delta"'
    turn_end_prefix = '{"type":"input_audio_buffer.speech_stopped"'

    @classmethod
    def is_turn_end(cls, message):
        """Whether the server says its VAD ended the user's turn (Parley's speech_stopped)."""
        return isinstance(message, str) and message.startswith(cls.turn_end_prefix)

    @staticmethod
    def encode(frame):
        return '{"type":"input_audio_buffer.append","audio":"%s"}' % base64.b64encode(frame).decode("ascii")

    @classmethod
    def audio_bytes(cls, message):
        """Bytes of agent audio in a server message (0 for other events)."""
        if isinstance(message, str) and message.startswith(cls.audio_prefix):
            start = message.index('"delta":"') + 9
            end = message.index('"', start)
            length = end - start
            padding = message.count("=", end - 2, end)
            return length // 4 * 3 - padding
        return 0

    @staticmethod
    def headers(token):
        return {"Authorization": f"Bearer {token}"} if token else {}

    @staticmethod
    def setup_messages(args):
        """The session's turn detection: the same speech threshold and silence window as the
        other system's VAD, set the way any Realtime client sets it."""
        turn_detection = {"type": "server_vad", "threshold": args.vad_threshold, "silence_duration_ms": args.silence_ms}
        update = {"type": "session.update", "session": {"type": "realtime", "audio": {"input": {"turn_detection": turn_detection}}}}
        return [json.dumps(update)]


class PipecatProtocol:
    """Pipecat's protobuf serializer: Frame{audio: AudioRawFrame{audio, sample_rate, num_channels}}."""

    @staticmethod
    def encode(frame):
        inner = field_bytes(3, frame) + field_varint(4, RATE) + field_varint(5, 1)
        return field_bytes(2, inner)

    @staticmethod
    def audio_bytes(message):
        """Bytes of agent audio in a server message (0 for text, transcripts, RTVI messages)."""
        if not isinstance(message, bytes):
            return 0
        field, payload = read_length_delimited(message, 0)
        if field != 2 or payload is None:
            return 0
        position = 0
        while position < len(payload):
            inner_field, value = read_length_delimited(payload, position)
            if inner_field is None:
                return 0
            if inner_field == 3:
                return len(value)
            position = skip_field(payload, position)
        return 0

    @staticmethod
    def headers(token):
        return {}

    @staticmethod
    def setup_messages(args):
        """Nothing: Pipecat's VAD is configured when its server starts."""
        return []

    @staticmethod
    def is_turn_end(message):
        """Pipecat tells the client nothing at the VAD's decision (its RTVI user-stopped-speaking
        comes after the transcript), so no split is measured."""
        return False


def varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field_bytes(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def field_varint(number, value):
    return varint(number << 3) + varint(value)


def read_varint(data, position):
    result = shift = 0
    while True:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7


def read_length_delimited(data, position):
    """(field number, payload) of the field at `position`; payload is None when it is not
    length-delimited."""
    try:
        key, position = read_varint(data, position)
        if key & 7 != 2:
            return key >> 3, None
        length, position = read_varint(data, position)
        return key >> 3, data[position:position + length]
    except IndexError:
        return None, None


def skip_field(data, position):
    key, position = read_varint(data, position)
    wire_type = key & 7
    if wire_type == 0:
        return read_varint(data, position)[1]
    if wire_type == 1:
        return position + 8
    if wire_type == 2:
        length, position = read_varint(data, position)
        return position + length
    if wire_type == 5:
        return position + 4
    raise ValueError(f"unsupported protobuf wire type {wire_type}")


# --- Server process figures --------------------------------------------------------------------


class ProcessSampler:
    """CPU seconds and resident memory of the server: its process and every process it started
    (a server may run one worker process per core), from /proc."""

    def __init__(self, pid):
        self.pid = pid
        self.ticks = os.sysconf("SC_CLK_TCK")
        self.peak_rss_kb = 0

    def processes(self):
        """The server's process and its descendants."""
        if not self.pid:
            return []
        found, pending = [], [self.pid]
        while pending:
            pid = pending.pop()
            found.append(pid)
            try:
                for thread in os.listdir(f"/proc/{pid}/task"):
                    with open(f"/proc/{pid}/task/{thread}/children") as handle:
                        pending += [int(child) for child in handle.read().split()]
            except OSError:
                continue
        return found

    def cpu_seconds(self):
        total = 0
        for pid in self.processes():
            try:
                with open(f"/proc/{pid}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            # Fields 14 and 15 (utime, stime) are the 12th and 13th after the command name.
            total += int(fields[11]) + int(fields[12])
        return total / self.ticks

    def run_queue_wait_seconds(self):
        """Time the server's threads were ready to run but waiting for a CPU (schedstat run_delay)."""
        total = 0
        for pid in self.processes():
            try:
                threads = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for thread in threads:
                try:
                    with open(f"/proc/{pid}/task/{thread}/schedstat") as handle:
                        total += int(handle.read().split()[1])
                except (OSError, IndexError, ValueError):
                    continue
        return total / 1e9

    def rss_kb(self):
        total = 0
        for pid in self.processes():
            try:
                with open(f"/proc/{pid}/status") as handle:
                    total += next((int(line.split()[1]) for line in handle if line.startswith("VmRSS:")), 0)
            except OSError:
                continue
        return total

    def sample(self):
        rss = self.rss_kb()
        self.peak_rss_kb = max(self.peak_rss_kb, rss)
        return rss


# --- Sessions ----------------------------------------------------------------------------------


class Turn:
    __slots__ = ("end_of_speech", "window_sent", "turn_ended", "first_audio", "last_audio", "audio_bytes")

    def __init__(self, end_of_speech):
        self.end_of_speech = end_of_speech
        self.window_sent = None
        self.turn_ended = None
        self.first_audio = None
        self.last_audio = None
        self.audio_bytes = 0


class Session:
    def __init__(self, index, start_tick):
        self.index = index
        self.start_tick = start_tick
        self.socket = None
        self.turns = []
        self.current = None
        self.closed_early = False
        self.error = None
        self.stray_audio_bytes = 0
        self.frames_sent = 0


async def open_session(session, args, protocol):
    try:
        session.socket = await connect(
            args.url,
            additional_headers=protocol.headers(args.token),
            compression=None,
            max_size=16 << 20,
            open_timeout=30,
            ping_interval=None,
        )
    except Exception as error:  # noqa: BLE001 — any failure to connect is reported, not raised
        session.error = f"connect: {error!r}"
        return
    for message in protocol.setup_messages(args):
        await session.socket.send(message)


async def read_session(session, protocol):
    try:
        async for message in session.socket:
            count = protocol.audio_bytes(message)
            if not count:
                if protocol.is_turn_end(message) and session.current is not None and session.current.turn_ended is None:
                    session.current.turn_ended = time.monotonic()
                continue
            now = time.monotonic()
            turn = session.current
            if turn is None:
                session.stray_audio_bytes += count
                continue
            if turn.first_audio is None:
                turn.first_audio = now
            turn.last_audio = now
            turn.audio_bytes += count
    except Exception as error:  # noqa: BLE001
        session.error = session.error or f"read: {error!r}"
    session.closed_early = True


async def drive(sessions, args, speech_frames, silence_frames, protocol, sampler):
    """One ticker for all sessions: every 20 ms each session sends its next frame. A session's
    cycle is its utterance followed by silence until the turn period is over."""
    encoded_speech = [protocol.encode(frame) for frame in speech_frames]
    encoded_silence = [protocol.encode(frame) for frame in silence_frames]
    period_ticks = args.turn_period_ms // FRAME_MS
    speech_ticks = len(encoded_speech)
    window_tick = speech_ticks - 1 + args.silence_ms // FRAME_MS
    last_start = max(session.start_tick for session in sessions)
    total_ticks = last_start + args.turns * period_ticks
    started = time.monotonic()
    late_ticks = 0
    worst_lag = 0.0
    next_sample = started
    for tick in range(total_ticks):
        deadline = started + (tick + 1) * FRAME_MS / 1000
        delay = deadline - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        lag = time.monotonic() - deadline
        worst_lag = max(worst_lag, lag)
        if lag > FRAME_MS / 1000:
            late_ticks += 1
        now = time.monotonic()
        if now >= next_sample:
            sampler.sample()
            next_sample = now + 0.25
        for session in sessions:
            socket = session.socket
            if socket is None or session.closed_early:
                continue
            position = tick - session.start_tick
            if position < 0 or position >= args.turns * period_ticks:
                continue
            in_cycle = position % period_ticks
            message = encoded_speech[in_cycle] if in_cycle < speech_ticks else encoded_silence[in_cycle % len(encoded_silence)]
            try:
                await socket.send(message)
            except Exception as error:  # noqa: BLE001
                session.error = session.error or f"send: {error!r}"
                session.closed_early = True
                continue
            session.frames_sent += 1
            if in_cycle == speech_ticks - 1:
                # The last speech frame is on its way: the user just stopped talking.
                session.current = Turn(time.monotonic())
                session.turns.append(session.current)
            elif in_cycle == window_tick and session.current is not None:
                # The silence window is complete in audio time.
                session.current.window_sent = time.monotonic()
    return {"late_ticks": late_ticks, "ticks": total_ticks, "worst_tick_lag_ms": worst_lag * 1000}


def percentile(values, p):
    """The nearest-rank percentile (p in 0-100) of `values`, None when there are none. The rank
    is ceil(p * n / 100) with p * n formed first, so whole percentiles of whole counts are exact
    (p / 100 * n makes p7 of 100 values 7.000000000000001, and the 8th value)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, math.ceil(p * len(ordered) / 100) - 1))
    return ordered[rank]


async def run(args):
    protocol = ParleyProtocol if args.system == "parley" else PipecatProtocol
    speech_frames, silence_frames = load_utterance(args.utterance, args.lead_ms, args.dither, args.seed)
    period_ticks = args.turn_period_ms // FRAME_MS
    if len(speech_frames) >= period_ticks:
        raise SystemExit("the turn period must be longer than the utterance")
    rng = random.Random(args.seed)
    # Sessions start spread over one turn period, so turns end at different moments.
    ramp_ticks = 0 if args.sessions == 1 else period_ticks
    sessions = [Session(i, rng.randrange(ramp_ticks) if ramp_ticks else 0) for i in range(args.sessions)]
    sampler = ProcessSampler(args.server_pid)
    baseline_rss_kb = sampler.sample()

    connect_started = time.monotonic()
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)

    async def open_in_turn(session):
        async with gate:
            await open_session(session, args, protocol)

    await asyncio.gather(*(open_in_turn(s) for s in sessions))
    connect_seconds = time.monotonic() - connect_started
    connected = [s for s in sessions if s.socket is not None]
    idle_rss_kb = sampler.sample()
    readers = [asyncio.create_task(read_session(s, protocol)) for s in connected]

    cpu_before = sampler.cpu_seconds()
    wait_before = sampler.run_queue_wait_seconds()
    wall_before = time.monotonic()
    pacing = await drive(connected, args, speech_frames, silence_frames, protocol, sampler)
    wall_seconds = time.monotonic() - wall_before
    cpu_seconds = sampler.cpu_seconds() - cpu_before
    wait_seconds = sampler.run_queue_wait_seconds() - wait_before
    sampler.sample()

    for session in connected:
        await session.socket.close()
    await asyncio.wait(readers, timeout=5)

    expected_bytes = args.reply_audio_ms * BYTES_PER_MS
    first_audio_ms, raw_first_audio_ms, whole_reply_ms = [], [], []
    endpointing_ms, after_turn_end_ms = [], []
    answered = complete = 0
    turns = 0
    for session in connected:
        for turn in session.turns:
            turns += 1
            if turn.first_audio is None:
                continue
            answered += 1
            raw_first_audio_ms.append((turn.first_audio - turn.end_of_speech) * 1000)
            # End of speech -> first audio, without the client's own lateness while it streamed
            # the silence window: the window counts as exactly its length in audio time.
            reference = turn.window_sent if turn.window_sent and turn.window_sent < turn.first_audio else None
            first_audio_ms.append(
                args.silence_ms + (turn.first_audio - reference) * 1000 if reference else (turn.first_audio - turn.end_of_speech) * 1000
            )
            if turn.turn_ended and reference and turn.turn_ended < turn.first_audio:
                endpointing_ms.append(args.silence_ms + (turn.turn_ended - reference) * 1000)
                after_turn_end_ms.append((turn.first_audio - turn.turn_ended) * 1000)
            if turn.audio_bytes >= expected_bytes * 0.95:
                complete += 1
                whole_reply_ms.append((turn.last_audio - turn.end_of_speech) * 1000)
    audio_seconds = sum(s.frames_sent for s in connected) * FRAME_MS / 1000
    errors = sorted({s.error for s in sessions if s.error})
    return {
        "system": args.system,
        "sessions": args.sessions,
        "connected": len(connected),
        "connect_seconds": connect_seconds,
        "turns": turns,
        "answered": answered,
        "complete": complete,
        "first_audio_ms": {"p50": percentile(first_audio_ms, 50), "p99": percentile(first_audio_ms, 99), "max": max(first_audio_ms, default=None)},
        "endpointing_ms": {"p50": percentile(endpointing_ms, 50), "p99": percentile(endpointing_ms, 99)},
        "after_turn_end_ms": {"p50": percentile(after_turn_end_ms, 50), "p99": percentile(after_turn_end_ms, 99)},
        "raw_first_audio_ms": {"p50": percentile(raw_first_audio_ms, 50), "p99": percentile(raw_first_audio_ms, 99)},
        "whole_reply_ms": {"p50": percentile(whole_reply_ms, 50), "p99": percentile(whole_reply_ms, 99)},
        "first_audio_samples_ms": [round(v, 2) for v in first_audio_ms],
        "server_cpu_seconds": cpu_seconds,
        "server_run_queue_wait_seconds": wait_seconds,
        "wall_seconds": wall_seconds,
        "session_audio_seconds": audio_seconds,
        "server_rss_kb": {"baseline": baseline_rss_kb, "idle_connected": idle_rss_kb, "peak": sampler.peak_rss_kb},
        "stray_audio_bytes": sum(s.stray_audio_bytes for s in connected),
        "pacing": pacing,
        "errors": errors[:10],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--system", choices=["parley", "pipecat"], required=True)
    parser.add_argument("--url", required=True, help="WebSocket URL of the server")
    parser.add_argument("--token", default="", help="bearer token (Parley)")
    parser.add_argument("--sessions", type=int, default=1)
    parser.add_argument("--turns", type=int, default=3, help="turns per session")
    parser.add_argument("--turn-period-ms", type=int, default=5000, help="one utterance plus the silence after it")
    parser.add_argument("--utterance", required=True, help="16-bit mono WAV with the user's speech")
    parser.add_argument("--lead-ms", type=int, default=300, help="quiet before the speech in each turn")
    parser.add_argument("--dither", type=int, default=16, help="amplitude of the noise that stands for silence")
    parser.add_argument("--silence-ms", type=int, default=300, help="the servers' silence window")
    parser.add_argument("--vad-threshold", type=float, default=0.7, help="speech probability that counts as speech (Parley)")
    parser.add_argument("--reply-audio-ms", type=int, required=True, help="agent audio a complete reply carries")
    parser.add_argument("--server-pid", type=int, default=0, help="process whose CPU and memory are read")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    result = asyncio.run(run(args))
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
