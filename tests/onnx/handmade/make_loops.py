#!/usr/bin/env python3
"""Writes the hand-made conformance set 'loops': Loops kept as loops in
the instruction IR (a run-time trip count or condition, or a static trip
count over the unrolling limit; docs/ControlFlow.md), in the layout of the
ONNX node tests, the outputs computed by onnxruntime. Run with
/work/main/.venv/bin/python from this directory; the generated files are
committed, so ctest needs neither.
"""
import os

import numpy as np
from onnx import TensorProto, helper

from handmade_io import const, model, vi, write_set

F, B, I32, I64 = (TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT32,
                  TensorProto.INT64)
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "loops")


rng = np.random.default_rng(11)

# Run-time trip count, scan output bounded by its declared leading dim 6:
# y = s * y + i, with s an outer-scope input; M = 0, 3 and 6 (the bound).
body = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Cast", ["i"], ["fi"], to=F),
     helper.make_node("Mul", ["y_in", "s"], ["y2"]),
     helper.make_node("Add", ["y2", "fi"], ["y_out"]),
     helper.make_node("Identity", ["y_out"], ["scan"])],
    "body", [vi("i", I64, []), vi("cond_in", B, []), vi("y_in", F, [3])],
    [vi("cond_out", B, []), vi("y_out", F, [3]), vi("scan", F, [3])])
y0 = rng.standard_normal(3).astype(np.float32)
s = np.array(0.5, np.float32)
write_set(ROOT, "test_loop_runtime_trip_count",
          model([helper.make_node("Loop", ["m", "", "y0"], ["y", "ys"],
                                  body=body)],
                [vi("m", I64, []), vi("s", F, []), vi("y0", F, [3])],
                [vi("y", F, [3]), vi("ys", F, [6, 3])]),
          [[np.array(m, np.int64), s, y0] for m in (0, 3, 6)])
# M = 9 above the bound 6 fails the call (a run-time check): that case
# is in make_checks.py.

# A while loop: no trip count, the condition computed from the data in the
# body (halve y while its sum of magnitudes is above 1).
body_w = helper.make_graph(
    [const("half", np.float32(0.5)),
     helper.make_node("Mul", ["y_in", "half"], ["y_out"]),
     helper.make_node("Abs", ["y_out"], ["a"]),
     helper.make_node("ReduceSum", ["a"], ["sa"], keepdims=0),
     const("one", np.float32(1.0)),
     helper.make_node("Greater", ["sa", "one"], ["cond_out"])],
    "body", [vi("i", I64, []), vi("cond_in", B, []), vi("y_in", F, [4])],
    [vi("cond_out", B, []), vi("y_out", F, [4])])
write_set(ROOT, "test_loop_while_data_cond",
          model([helper.make_node("Loop", ["", "c", "y0"], ["y"],
                                  body=body_w)],
                [vi("c", B, []), vi("y0", F, [4])], [vi("y", F, [4])]),
          [[np.array(True), (rng.standard_normal(4) * 40).astype(np.float32)],
           [np.array(False), rng.standard_normal(4).astype(np.float32)],
           [np.array(True), (rng.standard_normal(4) * 3).astype(np.float32)]])

# Both a trip count and a condition at run time: accumulate x into acc
# while acc stays below the outer-scope limit, at most M times; the scan
# output (bound 5) holds acc after each iteration.
body_mc = helper.make_graph(
    [helper.make_node("Add", ["acc_in", "x"], ["acc_out"]),
     helper.make_node("ReduceSum", ["acc_out"], ["total"], keepdims=0),
     helper.make_node("Less", ["total", "limit"], ["cond_out"]),
     helper.make_node("Identity", ["acc_out"], ["scan"])],
    "body", [vi("i", I64, []), vi("cond_in", B, []), vi("acc_in", F, [2])],
    [vi("cond_out", B, []), vi("acc_out", F, [2]), vi("scan", F, [2])])
x = np.array([1.0, 0.5], np.float32)
write_set(ROOT, "test_loop_trip_count_and_cond",
          model([helper.make_node("Loop", ["m", "c", "acc0"], ["acc", "accs"],
                                  body=body_mc)],
                [vi("m", I64, []), vi("c", B, []), vi("x", F, [2]),
                 vi("limit", F, []), vi("acc0", F, [2])],
                [vi("acc", F, [2]), vi("accs", F, [5, 2])]),
          [[np.array(5, np.int64), np.array(True), x, np.array(4.0, np.float32),
            np.zeros(2, np.float32)],
           [np.array(2, np.int64), np.array(True), x,
            np.array(100.0, np.float32), np.zeros(2, np.float32)],
           [np.array(5, np.int64), np.array(False), x,
            np.array(4.0, np.float32), np.zeros(2, np.float32)]])

# A static trip count over the unrolling limit: 10,000 iterations of a
# 3-node body (4096 / 3 would be the most unrolled), converging to 10.
body_big = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Mul", ["y_in", "k"], ["y1"]),
     helper.make_node("Add", ["y1", "b"], ["y_out"])],
    "body", [vi("i", I64, []), vi("cond_in", B, []), vi("y_in", F, [2])],
    [vi("cond_out", B, []), vi("y_out", F, [2])])
write_set(ROOT, "test_loop_static_over_limit",
          model([const("m", np.int64(10000)), const("k", np.float32(0.999)),
                 const("b", np.float32(0.01)),
                 helper.make_node("Loop", ["m", "", "y0"], ["y"],
                                  body=body_big)],
                [vi("y0", F, [2])], [vi("y", F, [2])]),
          [[np.array([-3.0, 25.0], np.float32)]])

# Carried values of several types (int32, float, bool) and an int64 scan
# output of the iteration number, run-time trip count (bound 4).
body_t = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     const("one", np.int32(1)),
     helper.make_node("Add", ["n_in", "one"], ["n_out"]),
     helper.make_node("Neg", ["f_in"], ["f_out"]),
     helper.make_node("Not", ["b_in"], ["b_out"]),
     helper.make_node("Identity", ["i"], ["iters"])],
    "body", [vi("i", I64, []), vi("cond_in", B, []), vi("n_in", I32, []),
             vi("f_in", F, [2, 2]), vi("b_in", B, [3])],
    [vi("cond_out", B, []), vi("n_out", I32, []), vi("f_out", F, [2, 2]),
     vi("b_out", B, [3]), vi("iters", I64, [])])
write_set(ROOT, "test_loop_carried_types",
          model([helper.make_node("Loop", ["m", "", "n0", "f0", "b0"],
                                  ["n", "f", "b", "its"], body=body_t)],
                [vi("m", I64, []), vi("n0", I32, []), vi("f0", F, [2, 2]),
                 vi("b0", B, [3])],
                [vi("n", I32, []), vi("f", F, [2, 2]), vi("b", B, [3]),
                 vi("its", I64, [4])]),
          [[np.array(m, np.int64), np.array(7, np.int32),
            rng.standard_normal((2, 2)).astype(np.float32),
            np.array([True, False, True])] for m in (1, 4)])

# A Scan over the unrolling limit (3000 steps of a 2-node body), kept as a
# loop: a running sum over axis 1 of a, b read in reverse along axis 0,
# the per-step outputs stacked along axis 1, reversed.
scan_body = helper.make_graph(
    [helper.make_node("Add", ["s_in", "a_t"], ["s_out"]),
     helper.make_node("Mul", ["s_out", "b_t"], ["o"])],
    "body", [vi("s_in", F, [2]), vi("a_t", F, [2]), vi("b_t", F, [2])],
    [vi("s_out", F, [2]), vi("o", F, [2])])
write_set(ROOT, "test_scan_over_limit",
          model([helper.make_node("Scan", ["s0", "a", "b"], ["s", "os"],
                                  body=scan_body, num_scan_inputs=2,
                                  scan_input_axes=[1, 0],
                                  scan_input_directions=[0, 1],
                                  scan_output_axes=[1],
                                  scan_output_directions=[1])],
                [vi("s0", F, [2]), vi("a", F, [2, 3000]),
                 vi("b", F, [3000, 2])],
                [vi("s", F, [2]), vi("os", F, [2, 3000])], 11),
          [[rng.standard_normal(2).astype(np.float32),
            (rng.standard_normal((2, 3000)) * 0.01).astype(np.float32),
            rng.uniform(0.5, 1.5, (3000, 2)).astype(np.float32)]])

# Slices at the iteration number (x[i:i+k], docs/RuntimeInputs.md): starts
# and ends computed in the body, their difference a constant. A 2-D window
# x[i:i+3, 1:3] (starts and ends built by Concat), and a backward one
# x[i+4:i+1:-1] whose int32 start and end come through a Cast and a Sub;
# the windows are scanned (bound 4) and summed into the carried value.
xw = rng.standard_normal((8, 3)).astype(np.float32)
body_s = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     const("x", xw),
     const("ax0", np.array([0], np.int64)),
     const("three", np.array([3], np.int64)),
     const("c1", np.array([1], np.int64)),
     const("c3", np.array([3], np.int64)),
     helper.make_node("Unsqueeze", ["i", "ax0"], ["iu"]),
     helper.make_node("Add", ["iu", "three"], ["iu3"]),
     helper.make_node("Concat", ["iu", "c1"], ["st"], axis=0),
     helper.make_node("Concat", ["iu3", "c3"], ["en"], axis=0),
     helper.make_node("Slice", ["x", "st", "en"], ["w"]),
     helper.make_node("Cast", ["iu"], ["i32"], to=I32),
     const("four", np.array([4], np.int32)),
     helper.make_node("Add", ["i32", "four"], ["b_st"]),
     const("three32", np.array([3], np.int32)),
     helper.make_node("Sub", ["b_st", "three32"], ["b_en"]),
     const("ax0_32", np.array([0], np.int32)),
     const("back", np.array([-1], np.int32)),
     helper.make_node("Slice", ["x", "b_st", "b_en", "ax0_32", "back"],
                      ["wb"]),
     helper.make_node("ReduceSum", ["w"], ["sw"], keepdims=0),
     helper.make_node("ReduceSum", ["wb"], ["swb"], keepdims=0),
     helper.make_node("Add", ["acc_in", "sw"], ["acc1"]),
     helper.make_node("Add", ["acc1", "swb"], ["acc_out"]),
     helper.make_node("Identity", ["w"], ["ws"]),
     helper.make_node("Identity", ["wb"], ["wbs"])],
    "body", [vi("i", I64, []), vi("cond_in", B, []), vi("acc_in", F, [])],
    [vi("cond_out", B, []), vi("acc_out", F, []), vi("ws", F, [3, 2]),
     vi("wbs", F, [3, 3])])
write_set(ROOT, "test_loop_slice_window",
          model([helper.make_node("Loop", ["m", "", "acc0"],
                                  ["acc", "wss", "wbss"], body=body_s)],
                [vi("m", I64, []), vi("acc0", F, [])],
                [vi("acc", F, []), vi("wss", F, [4, 3, 2]),
                 vi("wbss", F, [4, 3, 3])]),
          [[np.array(m, np.int64), np.array(0.5, np.float32)]
           for m in (1, 4)])

# A window that runs off the data fails the call (a run-time check):
# that case is in make_checks.py.

# A body reading a value computed before the loop through a broadcast: t =
# exp(relu(x)) of one element, added to the 64 carried values. The hoisted
# broadcast of t was virtual on the CPU (read through t's buffer), and t's
# buffer was free for the body to reuse: the snapshot taken inside the body
# was retaken at every iteration from the overwritten buffer.
body_b = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Add", ["y_in", "t"], ["a"]),
     helper.make_node("Mul", ["a", "a"], ["b"]),
     helper.make_node("Sqrt", ["b"], ["y_out"])],
    "body", [vi("i", I64, []), vi("cond_in", B, []), vi("y_in", F, [64])],
    [vi("cond_out", B, []), vi("y_out", F, [64])])
write_set(ROOT, "test_loop_outer_broadcast",
          model([helper.make_node("Relu", ["x"], ["r"]),
                 helper.make_node("Exp", ["r"], ["t"]),
                 helper.make_node("Loop", ["m", "", "y0"], ["y"],
                                  body=body_b)],
                [vi("m", I64, []), vi("x", F, [1]), vi("y0", F, [64])],
                [vi("y", F, [64])]),
          [[np.array(5, np.int64), np.array([0.3], np.float32),
            rng.random(64).astype(np.float32)]])

# Nested loops kept as loops (docs/ControlFlow.md "Nested loops"); a
# generator of their own so that the sets above keep their data.
rng_n = np.random.default_rng(40)


def i_to_f(src, dst):
    return helper.make_node("Cast", [src], [dst], to=F)


# A while loop in a while loop: the inner trip count is the outer counter
# (0 iterations when i = 0), the inner condition is computed from its data
# (stop once the sum of magnitudes reaches the outer-scope limit), and the
# inner body reads the outer counter and the outer-scope scale s.
inner_w = helper.make_graph(
    [i_to_f("j", "fj"), i_to_f("i", "fi"),
     const("tenth", np.float32(0.1)),
     helper.make_node("Mul", ["fi", "tenth"], ["u"]),
     helper.make_node("Mul", ["z_in", "s"], ["z1"]),
     helper.make_node("Add", ["z1", "fj"], ["z2"]),
     helper.make_node("Add", ["z2", "u"], ["z_out"]),
     helper.make_node("Abs", ["z_out"], ["za"]),
     helper.make_node("ReduceSum", ["za"], ["zs"], keepdims=0),
     helper.make_node("Less", ["zs", "limit"], ["c2_out"])],
    "inner", [vi("j", I64, []), vi("c2_in", B, []), vi("z_in", F, [3])],
    [vi("c2_out", B, []), vi("z_out", F, [3])])
outer_w = helper.make_graph(
    [const("t", np.array(True)),
     helper.make_node("Loop", ["i", "t", "y_in"], ["z"], body=inner_w),
     const("one", np.float32(1.0)),
     helper.make_node("Add", ["z", "one"], ["y_out"]),
     helper.make_node("ReduceSum", ["y_out"], ["ys"], keepdims=0),
     const("cap", np.float32(200.0)),
     helper.make_node("Less", ["ys", "cap"], ["c_out"])],
    "outer", [vi("i", I64, []), vi("c_in", B, []), vi("y_in", F, [3])],
    [vi("c_out", B, []), vi("y_out", F, [3])])
write_set(ROOT, "test_loop_nested_while",
          model([helper.make_node("Loop", ["m", "c", "y0"], ["y"],
                                  body=outer_w)],
                [vi("m", I64, []), vi("c", B, []), vi("s", F, []),
                 vi("limit", F, []), vi("y0", F, [3])],
                [vi("y", F, [3])]),
          [[np.array(m, np.int64), np.array(c), np.array(0.5, np.float32),
            np.array(lim, np.float32),
            rng_n.standard_normal(3).astype(np.float32)]
           for m, c, lim in ((0, True, 9.0), (1, True, 9.0), (5, True, 9.0),
                             (6, True, 1000.0), (4, False, 9.0))])

# An inner loop's scan output (declared bound 5) feeds the outer loop's
# carried value: acc += sum over the inner rows acc * 0.5 + j, i + 1 rows;
# the outer loop scans acc (bound 5).
inner_s = helper.make_graph(
    [helper.make_node("Identity", ["c2_in"], ["c2_out"]),
     i_to_f("j", "fj"),
     const("half", np.float32(0.5)),
     helper.make_node("Mul", ["acc_in", "half"], ["h"]),
     helper.make_node("Add", ["h", "fj"], ["row"])],
    "inner", [vi("j", I64, []), vi("c2_in", B, [])],
    [vi("c2_out", B, []), vi("row", F, [2])])
outer_s = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"]),
     const("one64", np.int64(1)),
     helper.make_node("Add", ["i", "one64"], ["n"]),
     helper.make_node("Loop", ["n", ""], ["rows"], body=inner_s),
     const("ax0", np.array([0], np.int64)),
     helper.make_node("ReduceSum", ["rows", "ax0"], ["rs"], keepdims=0),
     helper.make_node("Add", ["acc_in", "rs"], ["acc_out"]),
     helper.make_node("Identity", ["acc_out"], ["scan"])],
    "outer", [vi("i", I64, []), vi("c_in", B, []), vi("acc_in", F, [2])],
    [vi("c_out", B, []), vi("acc_out", F, [2]), vi("scan", F, [2])],
    value_info=[vi("rows", F, [5, 2])])
write_set(ROOT, "test_loop_nested_scan_feeds_carry",
          model([helper.make_node("Loop", ["m", "", "acc0"], ["acc", "accs"],
                                  body=outer_s)],
                [vi("m", I64, []), vi("acc0", F, [2])],
                [vi("acc", F, [2]), vi("accs", F, [5, 2])]),
          [[np.array(m, np.int64),
            rng_n.standard_normal(2).astype(np.float32)] for m in (1, 3, 5)])

# Three levels: for i < m, for j <= i, for k <= j: acc = acc * 0.9 + 100 i
# + 10 j + k, the innermost body reading both outer counters.
lvl3 = helper.make_graph(
    [helper.make_node("Identity", ["c3_in"], ["c3_out"]),
     i_to_f("i", "fi"), i_to_f("j", "fj"), i_to_f("k", "fk"),
     const("h", np.float32(100.0)), const("t", np.float32(10.0)),
     const("d", np.float32(0.9)),
     helper.make_node("Mul", ["fi", "h"], ["a"]),
     helper.make_node("Mul", ["fj", "t"], ["b"]),
     helper.make_node("Add", ["a", "b"], ["ab"]),
     helper.make_node("Add", ["ab", "fk"], ["abk"]),
     helper.make_node("Mul", ["acc_in3", "d"], ["dec"]),
     helper.make_node("Add", ["dec", "abk"], ["acc_out3"])],
    "lvl3", [vi("k", I64, []), vi("c3_in", B, []), vi("acc_in3", F, [2])],
    [vi("c3_out", B, []), vi("acc_out3", F, [2])])
lvl2 = helper.make_graph(
    [helper.make_node("Identity", ["c2_in"], ["c2_out"]),
     const("one64b", np.int64(1)),
     helper.make_node("Add", ["j", "one64b"], ["nk"]),
     helper.make_node("Loop", ["nk", "", "acc_in2"], ["acc_out2"],
                      body=lvl3)],
    "lvl2", [vi("j", I64, []), vi("c2_in", B, []), vi("acc_in2", F, [2])],
    [vi("c2_out", B, []), vi("acc_out2", F, [2])])
lvl1 = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"]),
     const("one64", np.int64(1)),
     helper.make_node("Add", ["i", "one64"], ["nj"]),
     helper.make_node("Loop", ["nj", "", "acc_in"], ["acc_out"], body=lvl2)],
    "lvl1", [vi("i", I64, []), vi("c_in", B, []), vi("acc_in", F, [2])],
    [vi("c_out", B, []), vi("acc_out", F, [2])])
write_set(ROOT, "test_loop_nested_three_levels",
          model([helper.make_node("Loop", ["m", "", "acc0"], ["acc"],
                                  body=lvl1)],
                [vi("m", I64, []), vi("acc0", F, [2])], [vi("acc", F, [2])]),
          [[np.array(m, np.int64), np.array([0.5, -2.0], np.float32)]
           for m in (0, 1, 4)])

# A kept loop inside an If branch and inside an unrolled loop's body, both
# in a kept loop: y += (i odd ? sum_{j<i} (j + s) : -1) + sum over two
# unrolled steps u of sum_{j<i+u} 1.
inner_if = helper.make_graph(
    [helper.make_node("Identity", ["c2_in"], ["c2_out"]),
     i_to_f("j", "fj"),
     helper.make_node("Add", ["fj", "s"], ["js"]),
     helper.make_node("Add", ["w_in", "js"], ["w_out"])],
    "inner_if", [vi("j", I64, []), vi("c2_in", B, []), vi("w_in", F, [])],
    [vi("c2_out", B, []), vi("w_out", F, [])])
then_g = helper.make_graph(
    [const("zero", np.float32(0.0)),
     helper.make_node("Loop", ["i", "", "zero"], ["w"], body=inner_if)],
    "then", [], [vi("w", F, [])])
else_g = helper.make_graph([const("neg", np.float32(-1.0))], "else", [],
                           [vi("neg", F, [])])
inner_u = helper.make_graph(
    [helper.make_node("Identity", ["c3_in"], ["c3_out"]),
     const("onef", np.float32(1.0)),
     helper.make_node("Add", ["v_in", "onef"], ["v_out"])],
    "inner_u", [vi("k", I64, []), vi("c3_in", B, []), vi("v_in", F, [])],
    [vi("c3_out", B, []), vi("v_out", F, [])])
unrolled = helper.make_graph(
    [helper.make_node("Identity", ["cu_in"], ["cu_out"]),
     helper.make_node("Add", ["i", "u"], ["iu"]),
     const("zf", np.float32(0.0)),
     helper.make_node("Loop", ["iu", "", "zf"], ["cnt"], body=inner_u),
     helper.make_node("Add", ["q_in", "cnt"], ["q_out"])],
    "unrolled", [vi("u", I64, []), vi("cu_in", B, []), vi("q_in", F, [])],
    [vi("cu_out", B, []), vi("q_out", F, [])])
outer_iu = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"]),
     const("two", np.int64(2)),
     helper.make_node("Mod", ["i", "two"], ["par"]),
     const("one64", np.int64(1)),
     helper.make_node("Equal", ["par", "one64"], ["odd"]),
     helper.make_node("If", ["odd"], ["w"], then_branch=then_g,
                      else_branch=else_g),
     const("q0", np.float32(0.0)),
     helper.make_node("Loop", ["two", "", "q0"], ["q"], body=unrolled),
     helper.make_node("Add", ["y_in", "w"], ["y1"]),
     helper.make_node("Add", ["y1", "q"], ["y_out"])],
    "outer", [vi("i", I64, []), vi("c_in", B, []), vi("y_in", F, [])],
    [vi("c_out", B, []), vi("y_out", F, [])])
write_set(ROOT, "test_loop_nested_in_if_and_unrolled",
          model([helper.make_node("Loop", ["m", "", "y0"], ["y"],
                                  body=outer_iu)],
                [vi("m", I64, []), vi("s", F, []), vi("y0", F, [])],
                [vi("y", F, [])]),
          [[np.array(m, np.int64), np.array(0.25, np.float32),
            np.array(1.5, np.float32)] for m in (0, 1, 5)])

# A Scan over the unrolling limit (2100 steps of a 2-node body), kept as a
# loop, in a kept loop's body: s = s * 0.5 + running sums of a, m times.
scan_in = helper.make_graph(
    [helper.make_node("Add", ["r_in", "a_t"], ["r_out"]),
     helper.make_node("Identity", ["r_out"], ["o"])],
    "scan_in", [vi("r_in", F, [2]), vi("a_t", F, [2])],
    [vi("r_out", F, [2]), vi("o", F, [2])])
outer_sc = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"]),
     helper.make_node("Scan", ["s_in", "a"], ["r", "os"], body=scan_in,
                      num_scan_inputs=1),
     const("half", np.float32(0.5)),
     helper.make_node("Mul", ["r", "half"], ["s_out"])],
    "outer", [vi("i", I64, []), vi("c_in", B, []), vi("s_in", F, [2])],
    [vi("c_out", B, []), vi("s_out", F, [2])])
write_set(ROOT, "test_loop_nested_scan_over_limit",
          model([helper.make_node("Loop", ["m", "", "s0"], ["s"],
                                  body=outer_sc)],
                [vi("m", I64, []), vi("a", F, [2100, 2]), vi("s0", F, [2])],
                [vi("s", F, [2])]),
          [[np.array(m, np.int64),
            (rng_n.standard_normal((2100, 2)) * 0.01).astype(np.float32),
            np.array([1.0, -1.0], np.float32)] for m in (0, 3)])

# An opset 8 Scan (leading batch axis) whose batch times steps times body
# nodes passes the unrolling limit while each batch element alone would
# not (40 x 60 x 2 = 4800): every element's scan is kept as a loop. The
# size rule once counted one element, and a 469-byte model unrolled to
# 395,000 nodes (fuzz finding 31).
rng_b = np.random.default_rng(31)
scan8_body = helper.make_graph(
    [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
     helper.make_node("Mul", ["s_out", "x_t"], ["y_t"])],
    "body", [vi("s_in", F, [4]), vi("x_t", F, [4])],
    [vi("s_out", F, [4]), vi("y_t", F, [4])])
write_set(ROOT, "test_scan8_batch_over_limit",
          model([helper.make_node("Scan", ["", "s0", "x"], ["s", "y"],
                                  body=scan8_body, num_scan_inputs=1)],
                [vi("s0", F, [40, 4]), vi("x", F, [40, 60, 4])],
                [vi("s", F, [40, 4]), vi("y", F, [40, 60, 4])], 8),
          [[(rng_b.standard_normal((40, 4)) * 0.1).astype(np.float32),
            (rng_b.standard_normal((40, 60, 4)) * 0.1).astype(np.float32)]])
