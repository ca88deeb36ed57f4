#!/usr/bin/env python3
"""Writes the hand-made conformance set 'rnn': RNN, GRU and LSTM with
sequence_lens shorter than the sequence, fed, computed in the graph (as
torch exports pack_padded_sequence) or constant, in the layout of the ONNX
node tests, the outputs computed by onnxruntime. Run with
/work/main/.venv/bin/python from this directory; the generated files are
committed, so ctest needs neither.
"""
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from handmade_io import model, vi, write_set

F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rnn")
rng = np.random.default_rng(35)


def w(*shape):
    return numpy_helper.from_array(
        (rng.standard_normal(shape) * 0.5).astype(np.float32))


def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# Bidirectional LSTM, lengths computed in the graph (a Cast of a fed int64
# tensor), initial states: past its length an entry keeps its state and
# outputs zeros; the reverse direction starts at its last valid step.
T, N, C, H = 5, 3, 4, 3
inits = [w(2, 4 * H, C), w(2, 4 * H, H), w(2, 8 * H), w(2, N, H), w(2, N, H)]
for t, n in zip(inits, "WRBhc"):
    t.name = n
x = randn(T, N, C)
write_set(ROOT, "test_lstm_bidirectional_computed_lens", model(
    [helper.make_node("Cast", ["lens"], ["lens32"], to=I32),
     helper.make_node("LSTM", ["x", "W", "R", "B", "lens32", "h", "c"],
                      ["y", "yh", "yc"], hidden_size=H,
                      direction="bidirectional")],
    [vi("x", F, [T, N, C]), vi("lens", I64, [N])],
    [vi("y", F, [T, 2, N, H]), vi("yh", F, [2, N, H]), vi("yc", F, [2, N, H])],
    14, inits),
    [[x, np.array(v, np.int64)] for v in ([5, 2, 4], [1, 5, 3], [5, 5, 5])])

# Reverse GRU, linear_before_reset, lengths fed directly (onnxruntime has
# no layout=1 GRU to compare with).
inits = [w(1, 3 * H, C), w(1, 3 * H, H), w(1, 6 * H)]
for t, n in zip(inits, "WRB"):
    t.name = n
write_set(ROOT, "test_gru_reverse_fed_lens", model(
    [helper.make_node("GRU", ["x", "W", "R", "B", "lens"], ["y", "yh"],
                      hidden_size=H, direction="reverse",
                      linear_before_reset=1)],
    [vi("x", F, [T, N, C]), vi("lens", I32, [N])],
    [vi("y", F, [T, 1, N, H]), vi("yh", F, [1, N, H])], 14, inits),
    [[randn(T, N, C), np.array(v, np.int32)] for v in ([3, 5, 1], [5, 5, 5])])

# Forward RNN with constant lengths shorter than the sequence.
inits = [w(1, H, C), w(1, H, H), numpy_helper.from_array(
    np.array([4, 2, 5], np.int32), "lens")]
for t, n in zip(inits, "WR"):
    t.name = n
write_set(ROOT, "test_rnn_constant_short_lens", model(
    [helper.make_node("RNN", ["x", "W", "R", "", "lens"], ["y", "yh"],
                      hidden_size=H)],
    [vi("x", F, [T, N, C])],
    [vi("y", F, [T, 1, N, H]), vi("yh", F, [1, N, H])], 14, inits),
    [[randn(T, N, C)]])
