#!/usr/bin/env python3
"""The CPU's requantizing integer products against the Interpreter, bit
for bit.

Usage: int8_requant_test.py MODEL_RUNNER WORKDIR [--require-amx]

QDQ Conv, MatMul and Gemm (transB) as onnxruntime's quantizer writes them,
Quantize([Relu](op(Dequantize(x), Dequantize(w), Dequantize(bias)))), which
fold-qdq turns into RequantConv / RequantMatMul: the CPU keeps those whole
and its int8 kernel stores the requantized bytes (bias, multiplier,
rounding, zero point, Relu, saturation) itself; the Interpreter runs their
definition, the integer product and the lowered Float32 chain. Shapes are
odd: K not a multiple of 4 and longer than one K block (partial sums
between blocks), partial panels and tiles, batches of images, strides,
pads, groups, depthwise convolutions (MatMul over 2-D activations and Gemm with a bias: the forms
fold-qdq folds).
Activations and outputs UInt8 and Int8 with zero points 0 and non-zero,
weights Int8 per channel or per tensor, with and without bias, with and
without Relu, scales that saturate part of the output. Each model runs
with -quantized-products=integer on the Interpreter and on the CPU for the
host (AMX tiles for the convolutions where it has AMX-INT8), without
AMX-INT8 (vpdpbusd where the host has AVX512-VNNI), without AVX512-VNNI
(the widening kernel, 16 lanes) and for an AVX2 CPU (8 lanes); the outputs
must be equal byte for byte (both sides compute the same Float32
operations), and the CPU's lowered graph must hold the fused node. With
--require-amx only the host run is made, and the test is skipped (exit
77) where the host lacks AMX-INT8.
"""
import re
import sys

import numpy as np
from onnx import helper

import int8_harness
from int8_harness import TYPES

RNG = np.random.default_rng(3708)
# Flag combinations per shape: the shapes cycle through all eight of
# cases(), so each combination meets a conv and a product shape.
PER_SHAPE = 2


def values(dtype, shape):
    return int8_harness.values(RNG, dtype, shape)


def f32(v):
    return np.array(v, np.float32)


class Case:
    """One QDQ product: its activation and output types, zero points,
    weights per channel or not, bias, Relu."""

    def __init__(self, xt, yt, zero, per_channel, bias, relu):
        self.xt, self.yt, self.zero = xt, yt, zero
        self.per_channel, self.bias, self.relu = per_channel, bias, relu

    def label(self):
        return "%s_%s_%s_%s_%s_%s" % (
            self.xt.__name__, self.yt.__name__, "z" if self.zero else "z0",
            "pc" if self.per_channel else "pt", "b" if self.bias else "nb",
            "relu" if self.relu else "id")

    def zp(self, dtype):
        if not self.zero:
            return np.array(0, dtype)
        return np.array(-9 if dtype == np.int8 else 131, dtype)


def cases():
    out = []
    for xt in (np.uint8, np.int8):
        for yt in (np.uint8, np.int8):
            for zero in (False, True):
                out.append((xt, yt, zero))
    # Vary the rest over those so that every value of each flag is covered.
    return [Case(xt, yt, z, i % 2 == 0, i % 3 != 2, i % 4 < 2)
            for i, (xt, yt, z) in enumerate(out)]


def build(op, x, w, c, case, k, attrs, waxis, spread=40):
    """The QDQ graph of \\p op on input x (as case.xt), weights w (int8),
    c channels, sum length k; the output step is about 1/spread of the
    sums' standard deviation over 40."""
    xs = f32(0.02)
    ws = (RNG.uniform(0.002, 0.02, c).astype(np.float32) if case.per_channel
          else f32(0.01))
    # An output scale near the sums' spread, so that some outputs saturate.
    ys = f32(0.02 * 0.01 * 128 * np.sqrt(k) / spread)
    inits = {"xs": xs, "xz": case.zp(case.xt), "w": w, "ws": ws,
             "wz": np.zeros(c if case.per_channel else (), np.int8),
             "ys": ys, "yz": case.zp(case.yt)}
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"],
                              axis=waxis)]
    inputs = ["xf", "wf"]
    if case.bias:
        inits["b"] = RNG.integers(-5000, 5000, c).astype(np.int32)
        inits["bs"] = (xs * ws).astype(np.float32).reshape(-1) \
            if case.per_channel else (xs * ws).astype(np.float32)
        inits["bz"] = np.zeros(c if case.per_channel else (), np.int32)
        nodes.append(helper.make_node("DequantizeLinear", ["b", "bs", "bz"],
                                      ["bf"], axis=0))
        inputs.append("bf")
    nodes.append(helper.make_node(op, inputs, ["p"], **attrs))
    last = "p"
    if case.relu:
        nodes.append(helper.make_node("Relu", ["p"], ["r"]))
        last = "r"
    nodes.append(helper.make_node("QuantizeLinear", [last, "ys", "yz"],
                                  ["y"]))
    return int8_harness.one_input_model(nodes, "requant", x, TYPES[case.yt],
                                        inits)


def conv_models():
    # (x shape, out channels, kernel, strides, pads, group[, dilations]):
    # 1x1 convolutions (the pointwise im2col: channels a multiple of 4 or
    # not, panels whole and partial), then wider windows (a 3-channel
    # stride-2 stem whose rows take im2col's 16-byte deinterleave);
    # the rest are depthwise (the direct kernels of DepthwiseInt8.cpp):
    # strides 1, 2 and 3, asymmetric pads, a 5x5 window, dilation, rows
    # longer than one vector with a partial one, and a plane past the
    # kernel's stack buffer (its row-by-row path); then for the vpdpbusd
    # kernel (where the host has AVX512-VNNI and AVX512-VBMI) 5x5 and 7x7
    # windows at strides 1 and 2 (two words of taps per row, the second
    # partial), a 1x1 and a 5x3 window, no padding, rows shorter and longer
    # than its 16 lanes, a column stride of 4 (the widest its 64-byte load
    # takes) and of 5 (the other kernel), mixed strides with a column
    # dilation of 3; last, 68 pixels (a last panel of 4 columns, which the
    # vpdpbusd kernel covers with one vector) over 1800 taps (several K
    # blocks, partial sums between them) and 13 output channels (a tile
    # of one row); last, whole channel quads per group (the quads im2col,
    # rows in (tap, channel) order): a 1x1 at stride 2, a 7x7 map (P = 49:
    # the transposed product, pixels as rows, 70 output channels a partial
    # panel, 49 rows a partial tile) over two K blocks, groups of 4
    # channels with mixed strides, dilation and uneven pads, a padded 1x1
    # over two images; then two more transposed products: two images of
    # two groups of 18 channels (K = 162, not whole quads) at stride 2 with
    # uneven pads (P = 20), and a row dilation (P = 24).
    shapes = [((1, 16, 7, 7), 32, (1, 1), (1, 1), (0, 0, 0, 0), 1),
              ((2, 10, 9, 13), 20, (1, 1), (1, 1), (0, 0, 0, 0), 1),
              ((1, 5, 9, 11), 7, (3, 3), (1, 1), (1, 1, 1, 1), 1),
              ((2, 8, 10, 10), 70, (3, 3), (2, 2), (1, 0, 2, 1), 1),
              ((1, 8, 6, 6), 6, (3, 3), (1, 1), (1, 1, 1, 1), 2),
              ((1, 130, 5, 5), 9, (3, 3), (1, 1), (1, 1, 1, 1), 1),
              ((1, 67, 9, 9), 13, (3, 3), (2, 2), (1, 1, 1, 1), 1),
              ((1, 3, 40, 71), 16, (3, 3), (2, 2), (1, 1, 1, 1), 1),
              ((1, 24, 13, 37), 24, (3, 3), (1, 1), (1, 1, 1, 1), 24),
              ((2, 16, 15, 15), 16, (3, 3), (2, 2), (1, 1, 1, 1), 16),
              ((1, 8, 9, 10), 8, (5, 5), (2, 1), (2, 1, 0, 2), 8),
              ((1, 6, 11, 12), 6, (3, 3), (1, 1), (2, 2, 2, 2), 6, (2, 2)),
              ((1, 3, 112, 112), 3, (3, 3), (2, 2), (1, 1, 1, 1), 3),
              ((1, 5, 17, 19), 5, (3, 3), (3, 3), (1, 1, 1, 1), 5),
              ((1, 2, 131, 130), 2, (3, 3), (1, 1), (1, 1, 1, 1), 2),
              ((1, 7, 14, 14), 7, (5, 5), (2, 2), (2, 2, 2, 2), 7),
              ((1, 5, 13, 23), 5, (7, 7), (1, 1), (3, 3, 3, 3), 5),
              ((2, 3, 20, 41), 3, (7, 7), (2, 2), (3, 2, 3, 1), 3),
              ((1, 9, 6, 6), 9, (1, 1), (1, 1), (0, 0, 0, 0), 9),
              ((1, 11, 28, 29), 11, (3, 3), (1, 1), (0, 0, 0, 0), 11),
              ((1, 4, 9, 70), 4, (3, 3), (4, 4), (1, 1, 1, 1), 4),
              ((1, 3, 12, 40), 3, (3, 3), (1, 5), (1, 1, 1, 1), 3),
              ((1, 6, 10, 33), 6, (5, 3), (1, 2), (0, 1, 2, 1), 6, (2, 3)),
              ((1, 200, 4, 17), 13, (3, 3), (1, 1), (1, 1, 1, 1), 1),
              ((1, 12, 9, 11), 20, (1, 1), (2, 2), (0, 0, 0, 0), 1),
              ((1, 64, 7, 7), 70, (3, 3), (1, 1), (1, 1, 1, 1), 1),
              ((1, 8, 11, 10), 10, (3, 3), (1, 2), (2, 1, 0, 3), 2, (2, 1)),
              ((2, 4, 5, 6), 6, (1, 1), (1, 1), (1, 1, 1, 1), 1),
              ((2, 36, 7, 9), 64, (3, 3), (2, 2), (1, 0, 1, 2), 2),
              ((1, 40, 8, 4), 48, (3, 3), (1, 1), (1, 1, 1, 1), 1, (2, 1))]
    cs = cases()
    for si, shape in enumerate(shapes):
        xs, oc, ks, st, pads, grp = shape[:6]
        dil = shape[6] if len(shape) > 6 else (1, 1)
        for ci in range(PER_SHAPE):
            case = cs[(si * PER_SHAPE + ci) % len(cs)]
            x = values(case.xt, xs)
            w = values(np.int8, (oc, xs[1] // grp) + ks)
            k = xs[1] // grp * ks[0] * ks[1]
            attrs = dict(kernel_shape=list(ks), strides=list(st),
                         pads=list(pads), group=grp, dilations=list(dil))
            name = "conv_%s_%d_k%d_s%d_g%d_%s" % (
                "x".join(map(str, xs)), oc, ks[0], st[0], grp, case.label())
            # Depthwise: steps 20 times wider, so that most outputs do not
            # saturate and show any error in the direct kernels' sums.
            spread = 2 if grp == xs[1] == oc and grp > 1 else 40
            yield name, build("Conv", x, w, oc, case, k, attrs, 0,
                              spread), x


def matmul_models():
    # (x shape, n, Gemm with transB)
    shapes = [((7, 13), 5, False), ((13, 37), 70, True),
              ((5, 1001), 129, False), ((3, 9), 17, False), ((6, 64), 64, True),
              ((1, 700), 80, True)]
    cs = cases()
    for si, (xs, n, gemm) in enumerate(shapes):
        for ci in range(PER_SHAPE):
            case = cs[(si * PER_SHAPE + ci + 1) % len(cs)]
            x = values(case.xt, xs)
            kk = xs[-1]
            if gemm:  # fold-qdq takes a Gemm with its bias only
                case = Case(case.xt, case.yt, case.zero, case.per_channel,
                            True, case.relu)
                w = values(np.int8, (n, kk))
                m = build("Gemm", x, w, n, case, kk, dict(transB=1), 0)
            else:  # onnxruntime writes a MatMul's bias as an Add after it
                case = Case(case.xt, case.yt, case.zero, case.per_channel,
                            False, case.relu)
                w = values(np.int8, (kk, n))
                m = build("MatMul", x, w, n, case, kk, {}, 1)
            name = "%s_%s_%d_%s" % ("gemm" if gemm else "mm",
                                    "x".join(map(str, xs)), n, case.label())
            yield name, m, x


def check(runner, work, name, m, x):
    """The outputs agree and the CPU's lowered graph holds the fused node."""
    def fused(label, graph):
        ops = re.findall(r"= (\w+)\(", graph)
        if "RequantConv" not in ops and "RequantMatMul" not in ops:
            return ["%s on %s: no fused node in %s" % (
                name, label, sorted(set(ops)))]
        return []

    failures, ref = int8_harness.check(
        runner, work, name, m, x,
        ["-quantized-products=integer", "-dump-graph"], fused)
    if ref is None:
        return failures
    saturated = float(np.isin(ref, [np.iinfo(ref.dtype).min,
                                    np.iinfo(ref.dtype).max]).mean())
    print("%s %s (%.0f %% saturated)" % ("FAIL" if failures else "PASS",
                                         name, 100 * saturated))
    return failures


def host_has_amx_int8():
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " amx_int8" in line
                       for line in f)
    except OSError:
        return False


def main():
    runner, work = sys.argv[1:3]
    if "--require-amx" in sys.argv[3:]:
        if not host_has_amx_int8():
            print("skipped: the host has no AMX-INT8")
            return 77
        for label in list(int8_harness.CPU_RUNS):
            if label != "CPU":
                del int8_harness.CPU_RUNS[label]
    failures, count = [], 0
    for name, m, x in list(matmul_models()) + list(conv_models()):
        failures += check(runner, work, name, m, x)
        count += 1
    return int8_harness.report(count, failures)


if __name__ == "__main__":
    sys.exit(main())
