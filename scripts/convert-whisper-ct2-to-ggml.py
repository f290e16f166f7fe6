#!/usr/bin/env python3
"""Converts a Whisper model in CTranslate2's format to whisper.cpp's ggml format.

Usage: convert-whisper-ct2-to-ggml.py <ct2 model dir> <output.bin>

The CTranslate2 directory holds model.bin (the weights), tokenizer.json (the byte-level BPE
vocabulary) and config.json. The output loads in whisper.cpp 1.8: magic, eleven hyper-parameters,
the 80-band Slaney mel filter bank (computed here), the vocabulary, then one record per tensor
with whisper.cpp's tensor names. Needs only numpy.
"""

import argparse
import json
import struct
import sys
from pathlib import Path

import numpy as np

GGML_MAGIC = 0x67676D6C
SAMPLE_RATE = 16000
N_FFT = 400

# CTranslate2 dtype codes and the numpy types they map to.
CT2_DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}
# Limits that keep a hostile model.bin from making us allocate without bound.
MAX_NAME_LENGTH = 4096
MAX_VARIABLES = 100_000
MAX_RANK = 8


class ConversionError(Exception):
    """A problem with the input model, reported as one line without a traceback."""


class Reader:
    """Little-endian reads over a bytes buffer with bounds checks."""

    def __init__(self, data: bytes):
        self.data = memoryview(data)
        self.offset = 0

    def take(self, count: int) -> memoryview:
        if count < 0 or self.offset + count > len(self.data):
            raise ConversionError(f"model.bin is truncated at byte {self.offset} (wanted {count} more)")
        chunk = self.data[self.offset:self.offset + count]
        self.offset += count
        return chunk

    def unpack(self, fmt: str):
        size = struct.calcsize("<" + fmt)
        return struct.unpack("<" + fmt, self.take(size))[0]

    def string(self) -> str:
        length = self.unpack("H")
        if length > MAX_NAME_LENGTH:
            raise ConversionError(f"model.bin has a {length}-byte name at byte {self.offset}")
        return bytes(self.take(length)).rstrip(b"\0").decode("utf-8")


def read_ct2_model(path: Path) -> dict:
    """Returns the variables of a CTranslate2 model.bin by name, aliases resolved."""
    reader = Reader(path.read_bytes())
    version = reader.unpack("I")
    if version < 5 or version > 6:
        raise ConversionError(f"unsupported CTranslate2 model.bin version {version} (expected 5 or 6)")
    spec = reader.string()
    if spec != "WhisperSpec":
        raise ConversionError(f"model.bin holds a {spec!r}, not a Whisper model")
    reader.unpack("I")  # spec revision
    count = reader.unpack("I")
    if count > MAX_VARIABLES:
        raise ConversionError(f"model.bin claims {count} variables")
    variables = {}
    for _ in range(count):
        name = reader.string()
        rank = reader.unpack("B")
        if rank > MAX_RANK:
            raise ConversionError(f"variable {name} has rank {rank}")
        shape = tuple(reader.unpack("I") for _ in range(rank))
        dtype_code = reader.unpack("B")
        if dtype_code not in CT2_DTYPES:
            raise ConversionError(f"variable {name} has unknown dtype code {dtype_code}")
        dtype = np.dtype(CT2_DTYPES[dtype_code]).newbyteorder("<")
        byte_count = reader.unpack("I")
        expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if byte_count != expected:
            raise ConversionError(f"variable {name}: {byte_count} bytes for shape {shape} of {dtype}")
        variables[name] = np.frombuffer(reader.take(byte_count), dtype=dtype).reshape(shape)
    alias_count = reader.unpack("I")
    if alias_count > MAX_VARIABLES:
        raise ConversionError(f"model.bin claims {alias_count} aliases")
    for _ in range(alias_count):
        alias = reader.string()
        target = reader.string()
        if target not in variables:
            raise ConversionError(f"alias {alias} points at missing variable {target}")
        variables[alias] = variables[target]
    return variables


def slaney_mel_filters(n_mels: int, sample_rate: int = SAMPLE_RATE, n_fft: int = N_FFT) -> np.ndarray:
    """The Slaney-style, area-normalised triangular mel filter bank Whisper was trained with."""
    f_sp = 200.0 / 3
    min_log_hz = 1000.0
    min_log_mel = min_log_hz / f_sp
    log_step = np.log(6.4) / 27.0

    def hz_to_mel(hz):
        hz = np.asanyarray(hz, dtype=np.float64)
        return np.where(hz >= min_log_hz, min_log_mel + np.log(np.maximum(hz, 1e-10) / min_log_hz) / log_step, hz / f_sp)

    def mel_to_hz(mel):
        mel = np.asanyarray(mel, dtype=np.float64)
        return np.where(mel >= min_log_mel, min_log_hz * np.exp(log_step * (mel - min_log_mel)), f_sp * mel)

    fft_freqs = np.linspace(0, sample_rate / 2, 1 + n_fft // 2)
    mel_points = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(sample_rate / 2), n_mels + 2))
    widths = np.diff(mel_points)
    ramps = mel_points[:, None] - fft_freqs[None, :]
    lower = -ramps[:-2] / widths[:-1, None]
    upper = ramps[2:] / widths[1:, None]
    weights = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_points[2:] - mel_points[:-2]))[:, None]
    return weights.astype(np.float32)


def byte_decoder() -> dict:
    """Maps GPT-2's printable stand-in characters back to the bytes they encode."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    codes = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            codes.append(256 + extra)
            extra += 1
    return {chr(code): byte for byte, code in zip(printable, codes)}


def read_vocabulary(path: Path) -> list:
    """The BPE tokens of tokenizer.json as raw bytes, ordered by id (special tokens excluded)."""
    try:
        tokenizer = json.loads(path.read_text(encoding="utf-8"))
        vocab = tokenizer["model"]["vocab"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ConversionError(f"cannot read the vocabulary from {path}: {error}") from None
    ids = sorted(vocab.values())
    if ids != list(range(len(ids))):
        raise ConversionError(f"{path}: token ids are not contiguous from 0")
    decoder = byte_decoder()
    tokens = [b""] * len(ids)
    for text, token_id in vocab.items():
        try:
            tokens[token_id] = bytes(decoder[character] for character in text)
        except KeyError:
            raise ConversionError(f"{path}: token {token_id} is not byte-level BPE") from None
    return tokens


def layer_count(variables: dict, prefix: str) -> int:
    count = 0
    while f"{prefix}/layer_{count}/ffn/linear_0/weight" in variables:
        count += 1
    return count


def split_rows(matrix: np.ndarray, parts: int) -> list:
    """Splits a fused projection (q|k|v stacked on the output axis) into its parts."""
    if matrix.shape[0] % parts != 0:
        raise ConversionError(f"fused projection of shape {matrix.shape} does not split into {parts}")
    return np.split(matrix, parts, axis=0)


def whisper_tensors(variables: dict, n_audio_layer: int, n_text_layer: int):
    """Yields (whisper.cpp name, array) for every tensor whisper.cpp loads."""

    def var(name):
        if name not in variables:
            raise ConversionError(f"model.bin has no variable {name}")
        return variables[name]

    def linear(target, source):
        yield f"{target}.weight", var(f"{source}/weight")
        yield f"{target}.bias", var(f"{source}/bias")

    def norm(target, source):
        yield f"{target}.weight", var(f"{source}/gamma")
        yield f"{target}.bias", var(f"{source}/beta")

    def self_attention(target, source):
        # CTranslate2 fuses query, key and value; Whisper's key projection has no bias.
        query_w, key_w, value_w = split_rows(var(f"{source}/linear_0/weight"), 3)
        query_b, _, value_b = split_rows(var(f"{source}/linear_0/bias"), 3)
        yield f"{target}.query.weight", query_w
        yield f"{target}.query.bias", query_b
        yield f"{target}.key.weight", key_w
        yield f"{target}.value.weight", value_w
        yield f"{target}.value.bias", value_b
        yield from linear(f"{target}.out", f"{source}/linear_1")

    def feed_forward(target, source):
        yield from norm(f"{target}.mlp_ln", f"{source}/layer_norm")
        yield from linear(f"{target}.mlp.0", f"{source}/linear_0")
        yield from linear(f"{target}.mlp.2", f"{source}/linear_1")

    yield "encoder.positional_embedding", var("encoder/position_encodings/encodings")
    for conv in ("conv1", "conv2"):
        yield f"encoder.{conv}.weight", var(f"encoder/{conv}/weight")
        yield f"encoder.{conv}.bias", var(f"encoder/{conv}/bias").reshape(-1, 1)
    for layer in range(n_audio_layer):
        source = f"encoder/layer_{layer}"
        target = f"encoder.blocks.{layer}"
        yield from norm(f"{target}.attn_ln", f"{source}/self_attention/layer_norm")
        yield from self_attention(f"{target}.attn", f"{source}/self_attention")
        yield from feed_forward(target, f"{source}/ffn")
    yield from norm("encoder.ln_post", "encoder/layer_norm")

    yield "decoder.positional_embedding", var("decoder/position_encodings/encodings")
    yield "decoder.token_embedding.weight", var("decoder/embeddings/weight")
    for layer in range(n_text_layer):
        source = f"decoder/layer_{layer}"
        target = f"decoder.blocks.{layer}"
        yield from norm(f"{target}.attn_ln", f"{source}/self_attention/layer_norm")
        yield from self_attention(f"{target}.attn", f"{source}/self_attention")
        yield from norm(f"{target}.cross_attn_ln", f"{source}/attention/layer_norm")
        yield from linear(f"{target}.cross_attn.query", f"{source}/attention/linear_0")
        key_w, value_w = split_rows(var(f"{source}/attention/linear_1/weight"), 2)
        _, value_b = split_rows(var(f"{source}/attention/linear_1/bias"), 2)
        yield f"{target}.cross_attn.key.weight", key_w
        yield f"{target}.cross_attn.value.weight", value_w
        yield f"{target}.cross_attn.value.bias", value_b
        yield from linear(f"{target}.cross_attn.out", f"{source}/attention/linear_2")
        yield from feed_forward(target, f"{source}/ffn")
    yield from norm("decoder.ln", "decoder/layer_norm")


def scalar(variables: dict, name: str) -> int:
    if name not in variables or variables[name].size != 1:
        raise ConversionError(f"model.bin has no scalar {name}")
    return int(variables[name].reshape(()))


def var_shape(variables: dict, name: str, rank: int) -> tuple:
    if name not in variables or variables[name].ndim != rank:
        raise ConversionError(f"model.bin has no rank-{rank} variable {name}")
    return variables[name].shape


def write_tensor(out, name: str, data: np.ndarray) -> None:
    # whisper.cpp keeps matrices in float16 and vectors, conv biases and positional
    # embeddings in float32.
    keep_f32 = data.ndim < 2 or name.endswith("positional_embedding") or name.endswith("conv1.bias") or name.endswith("conv2.bias")
    data = np.ascontiguousarray(data, dtype="<f4" if keep_f32 else "<f2")
    encoded = name.encode("utf-8")
    out.write(struct.pack("<iii", data.ndim, len(encoded), 0 if keep_f32 else 1))
    for dimension in reversed(data.shape):
        out.write(struct.pack("<i", dimension))
    out.write(encoded)
    out.write(data.tobytes())


def convert(model_dir: Path, output: Path) -> None:
    variables = read_ct2_model(model_dir / "model.bin")
    tokens = read_vocabulary(model_dir / "tokenizer.json")

    n_vocab, n_state = var_shape(variables, "decoder/embeddings/weight", 2)
    n_audio_ctx = var_shape(variables, "encoder/position_encodings/encodings", 2)[0]
    n_text_ctx = var_shape(variables, "decoder/position_encodings/encodings", 2)[0]
    n_mels = var_shape(variables, "encoder/conv1/weight", 3)[1]
    n_audio_layer = layer_count(variables, "encoder")
    n_text_layer = layer_count(variables, "decoder")
    n_audio_head = scalar(variables, "encoder/num_heads")
    n_text_head = scalar(variables, "decoder/num_heads")
    if n_audio_layer == 0 or n_text_layer == 0:
        raise ConversionError("model.bin has no encoder or decoder layers")
    if len(tokens) > n_vocab:
        raise ConversionError(f"tokenizer has {len(tokens)} tokens but the model only {n_vocab}")

    filters = slaney_mel_filters(n_mels)
    with output.open("wb") as out:
        out.write(struct.pack("<I", GGML_MAGIC))
        out.write(struct.pack("<11i", n_vocab, n_audio_ctx, n_state, n_audio_head, n_audio_layer,
                              n_text_ctx, n_state, n_text_head, n_text_layer, n_mels, 1))
        out.write(struct.pack("<ii", *filters.shape))
        out.write(filters.astype("<f4").tobytes())
        out.write(struct.pack("<i", len(tokens)))
        for token in tokens:
            out.write(struct.pack("<i", len(token)))
            out.write(token)
        count = 0
        for name, data in whisper_tensors(variables, n_audio_layer, n_text_layer):
            write_tensor(out, name, data)
            count += 1
    print(f"wrote {output}: {count} tensors, {len(tokens)} tokens, {n_audio_layer}+{n_text_layer} layers, "
          f"{n_mels} mels", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description="Convert a CTranslate2 Whisper model to whisper.cpp's ggml format.")
    parser.add_argument("model_dir", type=Path, help="directory with model.bin and tokenizer.json")
    parser.add_argument("output", type=Path, help="path of the ggml .bin to write")
    arguments = parser.parse_args()
    try:
        convert(arguments.model_dir, arguments.output)
    except (ConversionError, OSError) as error:
        print(f"convert-whisper-ct2-to-ggml: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
