#!/usr/bin/env python3
"""Converts Smart Turn v3.2 (pipecat's `smart-turn-v3.2-cpu.onnx`) into the flat file Parley reads.

The ONNX file is a statically quantised graph: int8 weights with one scale per output channel,
and activations rounded to uint8 (one scale and zero point each) at fixed points between the
operators. Parley computes the same network in Swift (Sources/ParleyLocal/SmartTurn), so this
script walks the graph once, names every weight and every activation rounding point by its role
("layers.2.fc1.weight", "layers.2.fc1.output") and writes them out. Weights stay int8 with their
per-channel scales, laid out [inputs][outputs] for every matrix product, exactly the published
numbers; biases are written as float32.

File layout (little-endian): magic b"PSTM", format version (u32, 1), tensor count (u32), then for
each tensor: name length (u32), name (UTF-8), element type (u32: 0 = float32, 1 = int8), dimension
count (u32), dimensions (u32 each, outermost first), values.

Usage: convert-smart-turn-onnx.py smart-turn-v3.2-cpu.onnx smart-turn-v3.2.bin
Runs at setup time only, with the `onnx` and `numpy` packages.
"""

import struct
import sys

import numpy as np
import onnx
from onnx import numpy_helper

LAYERS = 4


class Graph:
    """Lookups over the ONNX graph: producers, consumers and constant values."""

    def __init__(self, model):
        self.constants = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
        self.producer = {}
        self.consumers = {}
        for node in model.graph.node:
            for name in node.output:
                self.producer[name] = node
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)

    def consumer(self, tensor, op_type):
        """The one node of `op_type` reading `tensor`."""
        found = [n for n in self.consumers.get(tensor, []) if n.op_type == op_type]
        if len(found) != 1:
            raise ValueError(f"{tensor}: expected one {op_type} consumer, found {len(found)}")
        return found[0]

    def rounding(self, tensor):
        """(scale, zero point) of the QuantizeLinear that reads `tensor`, and the tensor after it."""
        quantize = self.consumer(tensor, "QuantizeLinear")
        scale = float(self.constants[quantize.input[1]])
        zero_point = float(self.constants[quantize.input[2]])
        dequantize = self.consumer(quantize.output[0], "DequantizeLinear")
        return np.array([scale, zero_point], dtype=np.float32), dequantize.output[0]

    def weight(self, tensor, transposed=False):
        """Int8 values ([inputs][outputs]) and per-output scales of the dequantised weight `tensor`."""
        node = self.producer[tensor]
        assert node.op_type == "DequantizeLinear", tensor
        values = self.constants[node.input[0]]
        scales = np.atleast_1d(self.constants[node.input[1]]).astype(np.float32)
        zero_points = np.atleast_1d(self.constants[node.input[2]])
        assert values.dtype == np.int8 and not zero_points.any(), tensor
        if values.ndim == 3:  # convolution [outputs][inputs][taps] -> [inputs * taps][outputs]
            values = values.reshape(values.shape[0], -1).T
        elif transposed:  # Gemm with transB: [outputs][inputs]
            values = values.T
        assert scales.size == values.shape[1], tensor
        return np.ascontiguousarray(values), scales

    def bias(self, tensor):
        """A bias as float32, dequantised when the graph stores it as int32."""
        if tensor in self.constants:
            return self.constants[tensor].astype(np.float32)
        node = self.producer[tensor]
        assert node.op_type == "DequantizeLinear", tensor
        values = self.constants[node.input[0]].astype(np.float64)
        scales = self.constants[node.input[1]].astype(np.float64)
        return (values * scales).astype(np.float32).reshape(-1)

    def added_constant(self, tensor):
        """The constant an Add node adds to `tensor`, and that node's output."""
        add = self.consumer(tensor, "Add")
        other = add.input[1] if add.input[0] == tensor else add.input[0]
        return self.constants[other], add.output[0]


def convert(graph):
    tensors = {}

    def matmul(prefix, node, transposed=False):
        values, scales = graph.weight(node.input[1], transposed)
        tensors[f"{prefix}.weight"] = values
        tensors[f"{prefix}.scales"] = scales

    # Convolutions: input rounding, conv1 (+ GELU), conv2 (+ GELU).
    tensors["input.rounding"], features = graph.rounding("input_features")
    conv = graph.consumer(features, "Conv")
    for index in (1, 2):
        matmul(f"conv{index}", conv)
        tensors[f"conv{index}.bias"] = graph.bias(conv.input[2])
        tensors[f"conv{index}.output"], conv_out = graph.rounding(conv.output[0])
        gelu = graph.consumers[conv_out]
        if index == 1:
            gelu_out = [n for n in gelu if n.op_type == "Mul" and conv_out in n.input][0].output[0]
            tensors["conv1.activation"], activation = graph.rounding(gelu_out)
            conv = graph.consumer(activation, "Conv")
        else:
            gelu_out = [n for n in gelu if n.op_type == "Mul" and conv_out in n.input][0].output[0]
    transpose = graph.consumer(gelu_out, "Transpose")
    tensors["positions"], residual = graph.added_constant(transpose.output[0])

    for layer in range(LAYERS):
        p = f"layers.{layer}"
        c = f"inner.encoder.layers.{layer}"
        norm = graph.consumer(residual, "LayerNormalization")
        tensors[f"{p}.attention_norm.weight"] = graph.constants[norm.input[1]]
        tensors[f"{p}.attention_norm.bias"] = graph.constants[norm.input[2]]
        tensors[f"{p}.attention_norm.output"], normed = graph.rounding(norm.output[0])
        for product in graph.consumers[normed]:
            assert product.op_type == "MatMul"
            rounding, out = graph.rounding(product.output[0])
            bias_add = [n for n in graph.consumers[out] if n.op_type == "Add"]
            if bias_add:
                bias_name = [i for i in bias_add[0].input if i != out][0]
                role = "query" if bias_name == f"{c}.self_attn.q_proj.bias" else "value"
                tensors[f"{p}.{role}.bias"] = graph.constants[bias_name]
                after_bias = bias_add[0].output[0]
            else:
                role = "key"
            matmul(f"{p}.{role}", product)
            tensors[f"{p}.{role}.output"] = rounding
            # Each of query, key and value is rounded once more after its bias and head split
            # (query and key after a scale by 64^-1/4).
            follow = graph.consumer(after_bias if bias_add else out, "Reshape").output[0]
            while not any(n.op_type == "QuantizeLinear" for n in graph.consumers[follow]):
                node = [n for n in graph.consumers[follow] if n.op_type in ("Mul", "Transpose", "Reshape")][0]
                if node.op_type == "Mul":
                    scale = [i for i in node.input if i != follow][0]
                    tensors["attention.scale"] = graph.constants[scale].astype(np.float32).reshape(1)
                follow = node.output[0]
            tensors[f"{p}.{role}.heads"], head_out = graph.rounding(follow)
            if role == "query":
                scores_node = graph.consumer(head_out, "MatMul")
            if role == "value":
                value_heads = head_out
        tensors[f"{p}.scores"], scores = graph.rounding(scores_node.output[0])
        softmax = graph.consumer(scores, "Softmax")
        tensors[f"{p}.weights"], weights = graph.rounding(softmax.output[0])
        mixed = graph.consumer(weights, "MatMul")
        assert value_heads in mixed.input
        tensors[f"{p}.mixed"], mixed_out = graph.rounding(mixed.output[0])
        reshape = graph.consumer(graph.consumer(mixed_out, "Transpose").output[0], "Reshape")
        _, merged = graph.rounding(reshape.output[0])  # same scale and zero point: no change
        out_proj = graph.consumer(merged, "MatMul")
        matmul(f"{p}.out", out_proj)
        tensors[f"{p}.out.output"], out = graph.rounding(out_proj.output[0])
        tensors[f"{p}.out.bias"], attention = graph.added_constant(out)
        residual = graph.consumer(attention, "Add").output[0]

        norm = graph.consumer(residual, "LayerNormalization")
        tensors[f"{p}.mlp_norm.weight"] = graph.constants[norm.input[1]]
        tensors[f"{p}.mlp_norm.bias"] = graph.constants[norm.input[2]]
        tensors[f"{p}.mlp_norm.output"], normed = graph.rounding(norm.output[0])
        fc1 = graph.consumer(normed, "MatMul")
        matmul(f"{p}.fc1", fc1)
        tensors[f"{p}.fc1.output"], out = graph.rounding(fc1.output[0])
        tensors[f"{p}.fc1.bias"], hidden = graph.added_constant(out)
        gelu = [n for n in graph.consumers[hidden] if n.op_type == "Mul"][0].output[0]
        tensors[f"{p}.fc1.activation"], activation = graph.rounding(gelu)
        fc2 = graph.consumer(activation, "MatMul")
        matmul(f"{p}.fc2", fc2)
        tensors[f"{p}.fc2.output"], out = graph.rounding(fc2.output[0])
        tensors[f"{p}.fc2.bias"], mlp = graph.added_constant(out)
        residual = graph.consumer(mlp, "Add").output[0]

    norm = graph.consumer(residual, "LayerNormalization")
    tensors["final_norm.weight"] = graph.constants[norm.input[1]]
    tensors["final_norm.bias"] = graph.constants[norm.input[2]]
    tensors["final_norm.output"], encoded = graph.rounding(norm.output[0])

    # Attention pooling: a score per frame (linear, tanh, linear), softmax over time, weighted sum.
    pool1 = graph.consumer(encoded, "MatMul")
    matmul("pool.hidden", pool1)
    tensors["pool.hidden.output"], out = graph.rounding(pool1.output[0])
    tensors["pool.hidden.bias"], hidden = graph.added_constant(out)
    tanh = graph.consumer(hidden, "Tanh")
    tensors["pool.hidden.activation"], activation = graph.rounding(tanh.output[0])
    pool2 = graph.consumer(activation, "MatMul")
    matmul("pool.score", pool2)
    tensors["pool.score.output"], out = graph.rounding(pool2.output[0])
    tensors["pool.score.bias"], score = graph.added_constant(out)
    softmax = graph.consumer(score, "Softmax")
    weighted = graph.consumer(softmax.output[0], "Mul")
    total = graph.consumer(weighted.output[0], "ReduceSum")
    tensors["pool.output"], pooled = graph.rounding(total.output[0])

    # Classifier: Gemm 384->256, LayerNorm, GELU, Gemm 256->64, GELU, Gemm 64->1, sigmoid.
    gemm = graph.consumer(pooled, "Gemm")
    matmul("classifier.0", gemm, transposed=True)
    tensors["classifier.0.bias"] = graph.bias(gemm.input[2])
    tensors["classifier.0.output"], out = graph.rounding(gemm.output[0])
    norm = graph.consumer(out, "LayerNormalization")
    tensors["classifier.norm.weight"] = graph.constants[norm.input[1]]
    tensors["classifier.norm.bias"] = graph.constants[norm.input[2]]
    gelu = [n for n in graph.consumers[norm.output[0]] if n.op_type == "Mul"][0].output[0]
    tensors["classifier.0.activation"], activation = graph.rounding(gelu)
    for index, name in ((1, "classifier.1"), (2, "classifier.2")):
        gemm = graph.consumer(activation, "Gemm")
        matmul(name, gemm, transposed=True)
        tensors[f"{name}.bias"] = graph.bias(gemm.input[2])
        tensors[f"{name}.output"], out = graph.rounding(gemm.output[0])
        if index == 1:
            gelu = [n for n in graph.consumers[out] if n.op_type == "Mul" and out in n.input][0].output[0]
            tensors[f"{name}.activation"], activation = graph.rounding(gelu)
    graph.consumer(out, "Sigmoid")
    return tensors


def write(tensors, path):
    with open(path, "wb") as file:
        file.write(b"PSTM")
        file.write(struct.pack("<II", 1, len(tensors)))
        for name, array in tensors.items():
            array = np.ascontiguousarray(array)
            if array.dtype == np.int8:
                kind = 1
            else:
                kind, array = 0, array.astype("<f4")
            encoded = name.encode()
            file.write(struct.pack("<I", len(encoded)) + encoded)
            file.write(struct.pack("<II", kind, array.ndim))
            file.write(struct.pack(f"<{array.ndim}I", *array.shape))
            file.write(array.tobytes())


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: convert-smart-turn-onnx.py MODEL.onnx OUTPUT.bin")
    graph = Graph(onnx.load(sys.argv[1]))
    tensors = convert(graph)
    write(tensors, sys.argv[2])
    print(f"wrote {len(tensors)} tensors to {sys.argv[2]}")


if __name__ == "__main__":
    main()
