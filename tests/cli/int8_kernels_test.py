#!/usr/bin/env python3
"""The CPU's integer product kernels against the Interpreter, bit for bit.

Usage: int8_kernels_test.py MODEL_RUNNER WORKDIR

MatMulInteger and ConvInteger with constant weights (the form the CPU's
libjit kernel takes: packed at compile time) over odd and partial shapes:
K not a multiple of 4 and longer than one K block, columns that leave a
partial panel, rows that leave a partial tile, batches, strided, padded,
dilated, grouped and depthwise convolutions; UInt8 and Int8 activations
with zero points 0 and non-zero (per tensor and per row), Int8 weights with
zero point 0 and UInt8 weights with zero point 128 (both the kernel's), and
Int8 weights with non-zero zero points (the portable loop nest's). Each
model runs on the Interpreter and on the CPU for the host, without
AVX512-VNNI (the widening kernel, 16 lanes) and for an AVX2 CPU (8 lanes);
the Int32 outputs must be equal element for element: integer sums are
exact, so any difference is a bug.
"""
import sys

import numpy as np
from onnx import TensorProto, helper

import int8_harness

RNG = np.random.default_rng(37)
PER_SHAPE = 4


def values(dtype, shape):
    return int8_harness.values(RNG, dtype, shape)


def model(node, x, consts):
    return int8_harness.one_input_model([node], "int8", x, TensorProto.INT32,
                                        consts)


def weight_cases():
    """(name, weight dtype, zero point of one channel)."""
    yield "s8z0", np.int8, lambda n: np.zeros(n, np.int8)
    yield "u8z128", np.uint8, lambda n: np.full(n, 128, np.uint8)
    yield "s8zvar", np.int8, lambda n: (np.arange(n) % 5 - 2).astype(np.int8)


def act_zero(dtype, kind, rows=1):
    if kind == "z0":
        return np.array(0, dtype)
    if kind == "row":  # per row of A (MatMulInteger only)
        return values(dtype, (rows,))
    return np.array(-7 if dtype == np.int8 else 9, dtype)


def combos(shape_index, kinds):
    """PER_SHAPE of the (activation type, zero point kind, weights) combos,
    a different slice for each shape, so that the shapes cover them all."""
    all_ = [(xt, zk, w) for xt in (np.uint8, np.int8) for zk in kinds
            for w in weight_cases()]
    return [all_[(shape_index * PER_SHAPE + i) % len(all_)]
            for i in range(PER_SHAPE)]


def matmul_cases():
    shapes = [((1, 1), 1), ((7, 13), 5), ((6, 64), 64), ((13, 37), 70),
              ((5, 1001), 129), ((2, 3, 9), 17), ((19, 8), 16), ((6, 5), 3),
              ((1, 700), 80)]
    for si, (xs, n) in enumerate(shapes):
        for xt, zk, (wn, wt, wz) in combos(si, ("z0", "zx", "row")):
            batched = len(xs) == 3 and wn == "s8z0"
            w = values(wt, (2, xs[-1], n) if batched else (xs[-1], n))
            x = values(xt, xs)
            consts = {"w": w, "zx": act_zero(xt, zk, xs[-2]),
                      "zw": np.array(0, wt) if batched else wz(n)}
            node = helper.make_node("MatMulInteger", ["x", "w", "zx", "zw"],
                                    ["y"])
            name = "mm_%s_%d_%s_%s_%s" % ("x".join(map(str, xs)), n,
                                          xt.__name__, zk, wn)
            yield name, model(node, x, consts), x


def conv_cases():
    # (x shape, out channels, kernel, strides, pads, dilations, group)
    shapes = [((1, 16, 7, 7), 32, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1),
              ((1, 5, 9, 11), 7, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
              ((2, 8, 10, 10), 70, (3, 3), (2, 2), (1, 0, 2, 1), (1, 1), 1),
              ((1, 8, 6, 6), 6, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2),
              ((1, 8, 9, 9), 8, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 8),
              ((1, 3, 12, 12), 5, (3, 2), (1, 1), (2, 2, 2, 2), (2, 3), 1),
              ((1, 130, 5, 5), 9, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
              # Whole channel quads per group (the quads im2col): a 1x1
              # at stride 2, a 7x7 map (P = 49) over two K blocks, groups
              # of 4 channels with mixed strides, dilation and uneven
              # pads, a padded 1x1.
              ((1, 12, 9, 11), 20, (1, 1), (2, 2), (0, 0, 0, 0), (1, 1), 1),
              ((1, 64, 7, 7), 24, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1),
              ((1, 8, 11, 10), 10, (3, 3), (1, 2), (2, 1, 0, 3), (2, 1), 2),
              ((2, 4, 5, 6), 6, (1, 1), (1, 1), (1, 1, 1, 1), (1, 1), 1),
              # A stem's byte gather at stride 2 (3 channels): rows of 35
              # outputs whose last sixteen taps are one overlapping
              # vector, panels crossing output rows.
              ((1, 3, 40, 70), 6, (7, 7), (2, 2), (3, 3, 3, 3), (1, 1), 1)]
    for si, (xs, oc, ks, st, pads, dil, grp) in enumerate(shapes):
        for xt, zk, (wn, wt, wz) in combos(si, ("z0", "zx")):
            w = values(wt, (oc, xs[1] // grp) + ks)
            x = values(xt, xs)
            # ConvInteger's filter zero point is per tensor.
            consts = {"w": w, "zx": act_zero(xt, zk),
                      "zw": np.array(wz(1)[0], wt)}
            node = helper.make_node(
                "ConvInteger", ["x", "w", "zx", "zw"], ["y"],
                kernel_shape=list(ks), strides=list(st), pads=list(pads),
                dilations=list(dil), group=grp)
            name = "conv_%s_%d_k%s_s%d_g%d_%s_%s_%s" % (
                "x".join(map(str, xs)), oc, "x".join(map(str, ks)), st[0],
                grp, xt.__name__, zk, wn)
            yield name, model(node, x, consts), x


def main():
    runner, work = sys.argv[1:3]
    failures, count = [], 0
    for name, m, x in list(matmul_cases()) + list(conv_cases()):
        f, _ = int8_harness.check(runner, work, name, m, x)
        count += 1
        print("%s %s" % ("FAIL" if f else "PASS", name))
        failures += f
    return int8_harness.report(count, failures)


if __name__ == "__main__":
    sys.exit(main())
