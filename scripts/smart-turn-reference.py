#!/usr/bin/env python3
"""Prints pipecat's Smart Turn v3.2 probabilities for WAV files: the reference Parley's native
port is tested against (Tests/ParleyLocalTests/SmartTurnModelTests.swift).

Runs pipecat's own analyzer (its feature extraction and onnxruntime on the bundled int8 model,
one thread) on each 16 kHz mono PCM16 file and prints a JSON list of probabilities, in order.
Test time only; needs the setup's virtualenv (pipecat-ai, onnxruntime).

Usage: smart-turn-reference.py CLIP.wav...
"""

import json
import sys
import wave

import numpy as np
from loguru import logger

logger.remove()
from pipecat.audio.turn.smart_turn.local_smart_turn_v3 import LocalSmartTurnAnalyzerV3  # noqa: E402


def read(path):
    with wave.open(path) as clip:
        if clip.getframerate() != 16000 or clip.getnchannels() != 1 or clip.getsampwidth() != 2:
            sys.exit(f"{path}: expected 16 kHz mono PCM16")
        return np.frombuffer(clip.readframes(clip.getnframes()), dtype=np.int16).astype(np.float32) / 32768.0


def main():
    analyzer = LocalSmartTurnAnalyzerV3(sample_rate=16000)
    probabilities = [analyzer._predict_endpoint(read(path))["probability"] for path in sys.argv[1:]]
    print(json.dumps(probabilities))


if __name__ == "__main__":
    main()
