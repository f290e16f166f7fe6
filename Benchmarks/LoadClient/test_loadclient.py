"""The load client's own rules: the percentile and where the user's speech ends (run by scripts/test)."""

import os
import random
import struct
import tempfile
import unittest
import wave

import loadclient


class PercentileTests(unittest.TestCase):
    def setUp(self):
        self.hundred = list(range(1, 101))
        random.Random(1).shuffle(self.hundred)

    def test_is_the_nearest_rank(self):
        self.assertEqual(loadclient.percentile([3, 1, 2, 4], 50), 2)
        self.assertEqual(loadclient.percentile(list(range(1, 11)), 90), 9)
        self.assertEqual(loadclient.percentile(list(range(1, 11)), 99), 10)
        self.assertEqual(loadclient.percentile(self.hundred, 99), 99)

    def test_whole_percentiles_of_whole_counts_are_exact(self):
        # 7 / 100 * 100 is 7.000000000000001 in floating point: a rank taken from it is one too high.
        for p in range(1, 101):
            self.assertEqual(loadclient.percentile(self.hundred, p), p, f"p{p}")

    def test_the_ends_are_the_smallest_and_the_largest_value(self):
        self.assertEqual(loadclient.percentile([5, 7, 6], 0), 5)
        self.assertEqual(loadclient.percentile([5, 7, 6], 100), 7)

    def test_of_nothing_is_none(self):
        self.assertIsNone(loadclient.percentile([], 50))


class EndOfSpeechTests(unittest.TestCase):
    def test_the_voiced_span_runs_from_the_first_to_the_last_sample_louder_than_minus_36_dbfs(self):
        samples = [0, 100, -524, 525, 3000, 0, 524, -525, 200, 0]
        self.assertEqual(loadclient.voiced_span(samples), (3, 7))
        self.assertIsNone(loadclient.voiced_span([0, 524, -524]))

    def test_the_utterance_ends_with_the_frame_that_holds_the_last_voiced_sample(self):
        # 24 kHz: 100 ms quiet, 50 ms loud (1,200 samples), then a tail quieter than -36 dBFS.
        samples = [0] * 2400 + [8000, -8000] * 600 + [300] * 2400
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "utterance.wav")
            with wave.open(path, "wb") as wav:
                wav.setnchannels(1)
                wav.setsampwidth(2)
                wav.setframerate(loadclient.RATE)
                wav.writeframes(struct.pack(f"<{len(samples)}h", *samples))
            frames, silence = loadclient.load_utterance(path, lead_ms=40, dither_amplitude=0, seed=1)
        # 40 ms of lead and the 50 ms burst: 90 ms, so the burst's last sample is in the 5th frame.
        self.assertEqual(len(frames), 5)
        last = struct.unpack(f"<{loadclient.FRAME_SAMPLES}h", frames[-1])
        self.assertEqual(last[loadclient.FRAME_SAMPLES // 2 - 1], -8000)
        self.assertTrue(all(sample == 0 for sample in last[loadclient.FRAME_SAMPLES // 2:]))
        self.assertEqual(len(silence), 50)


if __name__ == "__main__":
    unittest.main()
