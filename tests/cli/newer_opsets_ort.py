#!/usr/bin/env python3
"""Models of opsets 18-24 against onnxruntime (or numpy past its opset).

Usage: newer_opsets_ort.py MODEL_RUNNER WORKDIR

Past opset 17 an op's rule is the one of the newest version whose inputs,
attributes or meaning changed (lib/Importer/OpsetHistory.cpp); versions
that only admit new element types run the opset-17 rule. Each model here
uses a version past 17 of one op: the Reduce ops' axes input (18), Split's
num_outputs with an uneven last chunk (18), Pad's axes input (18) and
reflect mode at 19, Resize's axes and keep_aspect_ratio_policy (18, 19),
AveragePool's dilations (19), Gelu (20, both forms), QuantizeLinear's
output_dtype without a zero point (21), ScatterElements' max reduction
(18), and ops bumped for types only (Conv, LayerNormalization, Transpose,
Relu at 21). Each runs on the Interpreter and the CPU; float results must
be within 1e-5 of the largest |y| of onnxruntime's (the same float32
operations, summed in another order), integer results equal. Swish
(opset 24, past onnxruntime's) is checked against numpy. Then a model of
an opset newer than Ember knows, block quantization and antialiased
downsampling must each fail with one line naming the problem.
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T, helper as h

from newer_ops_harness import check_cases, check_one_line_errors, model

RNG = np.random.default_rng(18)
ort.set_default_logger_severity(3)


def x(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def i64(*v):
    return np.array(v, np.int64)


def cases():
    a = x(2, 3, 5, 6)
    for op in ["ReduceMean", "ReduceMax", "ReduceL2", "ReduceLogSumExp",
               "ReduceProd", "ReduceSumSquare"]:
        yield (op.lower() + "_18", model(
            [h.make_node(op, ["a", "ax"], ["y"], keepdims=0)],
            {"a": a}, {"ax": i64(1, -1)}, 18), {"a": a})
    yield ("reducemin_keepdims_18", model(
        [h.make_node("ReduceMin", ["a", "ax"], ["y"], keepdims=1)],
        {"a": a}, {"ax": i64(0, 2)}, 18), {"a": a})
    b = x(2, 7, 3)
    yield ("split_num_outputs_18", model(
        [h.make_node("Split", ["b"], ["y", "y1", "y2"], axis=1,
                     num_outputs=3)], {"b": b}, {}, 18,
        ("y", "y1", "y2")), {"b": b})
    yield ("pad_axes_18", model(
        [h.make_node("Pad", ["a", "p", "v", "ax"], ["y"])], {"a": a},
        {"p": i64(1, 2, 0, 3), "v": np.array(0.5, np.float32),
         "ax": i64(-1, 1)}, 18), {"a": a})
    yield ("pad_reflect_19", model(
        [h.make_node("Pad", ["a", "p"], ["y"], mode="reflect")], {"a": a},
        {"p": i64(0, 0, 2, 1, 0, 0, 1, 2)}, 19), {"a": a})
    c = x(1, 2, 6, 8)
    yield ("resize_axes_scales_18", model(
        [h.make_node("Resize", ["c", "", "s"], ["y"], mode="linear",
                     axes=[3, 2])], {"c": c},
        {"s": np.array([1.5, 2.0], np.float32)}, 18), {"c": c})
    for policy in ["not_larger", "not_smaller"]:
        yield ("resize_" + policy + "_19", model(
            [h.make_node("Resize", ["c", "", "", "sz"], ["y"],
                         mode="nearest", axes=[2, 3],
                         keep_aspect_ratio_policy=policy)], {"c": c},
            {"sz": i64(9, 20)}, 19), {"c": c})
    d = x(1, 3, 11, 12)
    yield ("averagepool_dilations_19", model(
        [h.make_node("AveragePool", ["d"], ["y"], kernel_shape=[3, 2],
                     dilations=[2, 3], pads=[1, 0, 2, 1],
                     count_include_pad=0)], {"d": d}, {}, 19), {"d": d})
    for approx in ["none", "tanh"]:
        yield ("gelu_" + approx + "_20", model(
            [h.make_node("Gelu", ["a"], ["y"], approximate=approx)],
            {"a": a}, {}, 20), {"a": a})
    yield ("quantize_output_dtype_21", model(
        [h.make_node("QuantizeLinear", ["a", "qs"], ["y"],
                     output_dtype=T.INT8)], {"a": a},
        {"qs": np.array(0.02, np.float32)}, 21, out_type=T.INT8), {"a": a})
    e = x(3, 4)
    yield ("scatterelements_max_18", model(
        [h.make_node("ScatterElements", ["e", "idx", "upd"], ["y"], axis=1,
                     reduction="max")], {"e": e},
        {"idx": np.array([[0, 2], [1, 1], [3, 0]], np.int64),
         "upd": x(3, 2)}, 18), {"e": e})
    f = x(1, 4, 9, 9)
    yield ("types_only_bumps_21", model(
        [h.make_node("Conv", ["f", "w"], ["c1"], pads=[1, 1, 1, 1]),
         h.make_node("Relu", ["c1"], ["r"]),
         h.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 3, 1]),
         h.make_node("LayerNormalization", ["t", "g", "bb"], ["y"])],
        {"f": f}, {"w": x(6, 4, 3, 3), "g": x(6), "bb": x(6)}, 21),
        {"f": f})


def check_errors(runner, work):
    a = x(2, 3)
    bad = [
        ("newer_than_known", model([h.make_node("Relu", ["a"], ["y"])],
                                   {"a": a}, {}, 29), "newer than the newest"),
        ("block_quantization", model(
            [h.make_node("DequantizeLinear", ["q", "s"], ["y"], axis=1,
                         block_size=2)], {}, {
                "q": np.zeros((2, 4), np.int8),
                "s": np.ones((2, 2), np.float32)}, 21), "block_size 2"),
        ("antialias_down", model(
            [h.make_node("Resize", ["c", "", "s"], ["y"], mode="linear",
                         antialias=1)], {"c": x(1, 1, 4, 4)},
            {"s": np.array([1, 1, 0.5, 0.5], np.float32)}, 18),
         "antialiased"),
    ]
    return check_one_line_errors(runner, work, bad, 28)


def main():
    runner, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    checked = []
    for name, m, feeds in cases():
        path = os.path.join(work, name + ".onnx")
        onnx.save(m, path)
        want = ort.InferenceSession(
            path, providers=["CPUExecutionProvider"]).run(None, feeds)
        checked.append((name, m, feeds, want))
    a = x(2, 3, 4)
    checked.append(("swish_24", model(
        [h.make_node("Swish", ["a"], ["y"], alpha=0.7)], {"a": a}, {}, 24),
        {"a": a}, [a / (1 + np.exp(-0.7 * a))]))
    fails = check_cases(runner, work, checked, 28)
    fails += check_errors(runner, work)
    print("%d failure(s)" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
