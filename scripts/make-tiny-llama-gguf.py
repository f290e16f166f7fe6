#!/usr/bin/env python3
"""Writes a tiny llama-architecture GGUF with random weights, for tests of llama-server.

Usage: make-tiny-llama-gguf.py <output.gguf> [seed]

The model (2 layers, 64-wide, a ~300-token byte-fallback vocabulary, a chat template) is a few
hundred KB, loads in llama.cpp in milliseconds and generates (meaningless) text. Its output row
for the end-of-sequence token is zero, so greedy decoding practically never stops early and a
test can interrupt a long reply. Needs numpy and the `gguf` package (both in Parley's virtualenv).
"""

import sys

import numpy as np
from gguf import GGUFWriter, TokenType

EMBEDDING = 64
FEED_FORWARD = 128
LAYERS = 2
HEADS = 4
CONTEXT = 32768  # long enough that a reply can outlast the test that interrupts it
CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>{{ message['content'] }}</s>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
WORDS = ["the", "a", "and", "to", "of", "hello", "yes", "no", "is", "it", "you", "I", "that", "what", "time"]


def vocabulary():
    """SentencePiece-style tokens: unknown, BOS, EOS, 256 byte tokens, letters and a few words."""
    tokens = [("<unk>", TokenType.UNKNOWN), ("<s>", TokenType.CONTROL), ("</s>", TokenType.CONTROL)]
    tokens += [(f"<0x{byte:02X}>", TokenType.BYTE) for byte in range(256)]
    tokens += [(character, TokenType.NORMAL) for character in "\u2581abcdefghijklmnopqrstuvwxyz.,?!"]
    tokens += [("\u2581" + word, TokenType.NORMAL) for word in WORDS]
    return tokens


def main() -> int:
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    output = sys.argv[1]
    rng = np.random.default_rng(int(sys.argv[2]) if len(sys.argv) == 3 else 0)
    tokens = vocabulary()

    writer = GGUFWriter(output, "llama")
    writer.add_name("parley-tiny-random")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(EMBEDDING)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FEED_FORWARD)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_rope_dimension_count(EMBEDDING // HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(0)
    writer.add_tokenizer_model("llama")
    writer.add_token_list([text.encode("utf-8") for text, _ in tokens])
    writer.add_token_scores([-float(index) for index in range(len(tokens))])
    writer.add_token_types([int(kind) for _, kind in tokens])
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_chat_template(CHAT_TEMPLATE)

    def weight(*shape):
        return (rng.standard_normal(shape) * 0.05).astype(np.float32)

    writer.add_tensor("token_embd.weight", weight(len(tokens), EMBEDDING))
    for layer in range(LAYERS):
        prefix = f"blk.{layer}"
        writer.add_tensor(f"{prefix}.attn_norm.weight", np.ones(EMBEDDING, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(f"{prefix}.{name}.weight", weight(EMBEDDING, EMBEDDING))
        writer.add_tensor(f"{prefix}.ffn_norm.weight", np.ones(EMBEDDING, dtype=np.float32))
        writer.add_tensor(f"{prefix}.ffn_gate.weight", weight(FEED_FORWARD, EMBEDDING))
        writer.add_tensor(f"{prefix}.ffn_up.weight", weight(FEED_FORWARD, EMBEDDING))
        writer.add_tensor(f"{prefix}.ffn_down.weight", weight(EMBEDDING, FEED_FORWARD))
    writer.add_tensor("output_norm.weight", np.ones(EMBEDDING, dtype=np.float32))
    output_weight = weight(len(tokens), EMBEDDING)
    output_weight[2] = 0  # EOS logit 0, below the largest random logit at every step
    writer.add_tensor("output.weight", output_weight)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
