"""Checks Parley's G.711 codec against CPython's audioop (an implementation nobody here wrote).

Usage: python g711_reference.py ENCODED DECODED
  ENCODED  2 × 65,536 bytes: Parley's μ-law, then A-law code of every 16-bit sample from -32768 up
  DECODED  2 × 256 little-endian int16: Parley's linear value of every μ-law, then A-law byte
Prints "ok" or the first mismatches, and exits non-zero on any mismatch.
"""
import array
import audioop
import sys

samples = array.array("h", range(-32768, 32768)).tobytes()
reference_encoded = audioop.lin2ulaw(samples, 2) + audioop.lin2alaw(samples, 2)
codes = bytes(range(256))
reference_decoded = audioop.ulaw2lin(codes, 2) + audioop.alaw2lin(codes, 2)

with open(sys.argv[1], "rb") as handle:
    encoded = handle.read()
with open(sys.argv[2], "rb") as handle:
    decoded = handle.read()

problems = []
for index, (ours, theirs) in enumerate(zip(encoded, reference_encoded)):
    if ours != theirs:
        law = "mu" if index < 65536 else "a"
        problems.append(f"encode {law}-law {index % 65536 - 32768}: ours {ours:#04x}, audioop {theirs:#04x}")
ours_values = array.array("h", decoded)
theirs_values = array.array("h", reference_decoded)
for index, (ours, theirs) in enumerate(zip(ours_values, theirs_values)):
    if ours != theirs:
        law = "mu" if index < 256 else "a"
        problems.append(f"decode {law}-law {index % 256:#04x}: ours {ours}, audioop {theirs}")
if len(encoded) != len(reference_encoded) or len(ours_values) != len(theirs_values):
    problems.append("wrong sizes")
print("ok" if not problems else "\n".join(problems[:20] + [f"{len(problems)} mismatches"]))
sys.exit(1 if problems else 0)
