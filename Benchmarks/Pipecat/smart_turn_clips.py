"""Pipecat's Smart Turn analyzer over the turn corpus's clips, for the `turns` bench area.

For each clip (a 16 kHz mono WAV with silence before and after), Pipecat's own parts decide
when the turn ends, wired as a Pipecat pipeline wires them (TurnAnalyzerUserTurnStopStrategy):
SileroVADAnalyzer with its default VADParams (confidence 0.7, start 0.2 s, stop 0.2 s,
min_volume 0.6) says when the user starts and stops speaking; LocalSmartTurnAnalyzerV3 with
its default SmartTurnParams (stop_secs 3, pre_speech_ms 500, max_duration_secs 8) gets every
20 ms frame with the VAD's speaking state, is asked when the VAD reports a stop, and the turn
ends when it says complete or when stop_secs of silence have passed. The pipeline's wait for
a final transcript is left out: Parley's figure does not include its transcript either.

Time is the clip's audio time: the analyzer's monotonic clock (which places the pre-speech
audio) is replaced by the audio clock, so the clips can run faster than real time.

usage: python smart_turn_clips.py MANIFEST.json OUT.json
  MANIFEST.json: [{"id": "...", "wav": "/path.wav"}, ...]
  OUT.json:      [{"id": "...", "turn_end_ms": 1234 or null,
                   "verdicts": [{"audio_ms": 1200, "probability": 0.93, "complete": true}]}, ...]
"""

import asyncio
import json
import sys
import types
import wave

import numpy as np
from loguru import logger

from pipecat.audio.turn.base_turn_analyzer import EndOfTurnState
from pipecat.audio.turn.smart_turn import base_smart_turn
from pipecat.audio.turn.smart_turn.local_smart_turn_v3 import LocalSmartTurnAnalyzerV3
from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.audio.vad.vad_analyzer import VADParams, VADState

SAMPLE_RATE = 16000
FRAME = 320  # 20 ms


class AudioClock:
    """Seconds of audio fed so far, standing in for time.monotonic inside the analyzer."""

    def __init__(self):
        self.seconds = 0.0

    def monotonic(self):
        return self.seconds


def read_wav(path):
    with wave.open(path, "rb") as wav:
        if wav.getframerate() != SAMPLE_RATE or wav.getnchannels() != 1 or wav.getsampwidth() != 2:
            raise ValueError(f"{path}: expected 16 kHz mono 16-bit")
        return wav.readframes(wav.getnframes())


async def run_clip(path, vad, clock):
    """Feeds one clip; returns the audio time at which the turn ended (or None) and the verdicts."""
    analyzer = LocalSmartTurnAnalyzerV3()  # Pipecat's defaults; the ONNX model ships in the wheel
    analyzer.set_sample_rate(SAMPLE_RATE)
    vad.set_sample_rate(SAMPLE_RATE)  # resets the VAD's state for the new clip
    clock.seconds = 0.0
    audio = read_wav(path)
    speaking = False
    state = VADState.QUIET
    verdicts = []
    for start in range(0, len(audio) - 2 * FRAME + 1, 2 * FRAME):
        chunk = audio[start : start + 2 * FRAME]
        clock.seconds += FRAME / SAMPLE_RATE
        audio_ms = round(clock.seconds * 1000)
        previous, state = state, vad._run_analyzer(chunk)
        if previous == VADState.STARTING and state == VADState.SPEAKING:
            analyzer.update_vad_start_secs(vad.params.start_secs)
            speaking = True
        elif previous == VADState.STOPPING and state == VADState.QUIET:
            speaking = False
            result, metrics = await analyzer.analyze_end_of_turn()
            if metrics is not None:
                verdicts.append({"audio_ms": audio_ms, "probability": metrics.probability,
                                 "complete": result == EndOfTurnState.COMPLETE})
            if result == EndOfTurnState.COMPLETE:
                return audio_ms, verdicts
        if analyzer.append_audio(chunk, speaking) == EndOfTurnState.COMPLETE:
            return audio_ms, verdicts
    return None, verdicts


async def main(manifest_path, out_path):
    logger.remove()
    clock = AudioClock()
    base_smart_turn.time = types.SimpleNamespace(monotonic=clock.monotonic, perf_counter=__import__("time").perf_counter)
    vad = SileroVADAnalyzer(params=VADParams())
    with open(manifest_path) as file:
        manifest = json.load(file)
    results = []
    for clip in manifest:
        turn_end_ms, verdicts = await run_clip(clip["wav"], vad, clock)
        results.append({"id": clip["id"], "turn_end_ms": turn_end_ms, "verdicts": verdicts})
        print(f"{clip['id']}: turn end {turn_end_ms} ms, verdicts {verdicts}", file=sys.stderr)
    with open(out_path, "w") as file:
        json.dump(results, file)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    asyncio.run(main(sys.argv[1], sys.argv[2]))
