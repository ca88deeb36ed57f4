#!/usr/bin/env python3
"""Writes the hand-made conformance sets of run-time checks
(docs/RuntimeInputs.md "Run-time checks"), the outputs computed by
onnxruntime: 'checks', data every check passes (every one must pass), and
'checks_fail', data a check refuses (the call must fail with the check's
message, tests/CMakeLists.txt). Run with /work/main/.venv/bin/python from
this directory; the generated files are committed, so ctest needs neither.
"""
import os

import numpy as np
from onnx import TensorProto, helper

from handmade_io import const, model, vi, write_set

F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64
HERE = os.path.dirname(os.path.abspath(__file__))
PASS, FAIL = os.path.join(HERE, "checks"), os.path.join(HERE, "checks_fail")

# A window that runs off the data in a loop: acc += sum(x[i:i+3]) for i < M
# over x of 5 entries. M = 3: every window fits; M = 5: ONNX's last two
# windows hold 2 and 1 entries, where the compiled length is 3.
x5 = np.array([1, 2, 4, 8, 16], np.float32)
body = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     const("x", x5),
     const("ax0", np.array([0], np.int64)),
     const("three", np.array([3], np.int64)),
     helper.make_node("Unsqueeze", ["i", "ax0"], ["st"]),
     helper.make_node("Add", ["st", "three"], ["en"]),
     helper.make_node("Slice", ["x", "st", "en"], ["w"], name="window"),
     helper.make_node("ReduceSum", ["w"], ["sw"], keepdims=0),
     helper.make_node("Add", ["acc_in", "sw"], ["acc_out"])],
    "body", [vi("i", I64, []), vi("cond_in", B, []), vi("acc_in", F, [])],
    [vi("cond_out", B, []), vi("acc_out", F, [])])
loop_slice = model([helper.make_node("Loop", ["m", "", "acc0"], ["acc"],
                                     body=body)],
                   [vi("m", I64, []), vi("acc0", F, [])], [vi("acc", F, [])])
write_set(PASS, "test_check_loop_slice", loop_slice,
          [[np.array(3, np.int64), np.array(0, np.float32)]])
write_set(FAIL, "test_check_loop_slice", loop_slice,
          [[np.array(5, np.int64), np.array(0, np.float32)]])

# Slices outside a loop whose starts and ends come from an input s: x[s:s+3]
# and the backward x[s+4:s+1:-1] over x of 5 entries. s = 0 and s = -5 (the
# start counted from the back, the end too: still 3 entries) fit; s = 3
# runs off the end of both.
nodes = [const("zero", np.array([0], np.int64)),
         const("three", np.array([3], np.int64)),
         const("one", np.array([1], np.int64)),
         const("four", np.array([4], np.int64)),
         const("ax0", np.array([0], np.int64)),
         const("back", np.array([-1], np.int64)),
         helper.make_node("Add", ["s", "zero"], ["st"]),
         helper.make_node("Add", ["s", "three"], ["en"]),
         helper.make_node("Slice", ["x", "st", "en"], ["y"], name="fwd"),
         helper.make_node("Add", ["s", "four"], ["bst"]),
         helper.make_node("Add", ["s", "one"], ["ben"]),
         helper.make_node("Slice", ["x", "bst", "ben", "ax0", "back"], ["z"],
                          name="bwd")]
plain = model(nodes, [vi("x", F, [5]), vi("s", I64, [1])],
              [vi("y", F, [3]), vi("z", F, [3])])
xs = np.arange(5, dtype=np.float32) + 1
write_set(PASS, "test_check_slice", plain,
          [[xs, np.array([0], np.int64)], [xs, np.array([-5], np.int64)]])
write_set(FAIL, "test_check_slice", plain, [[xs, np.array([3], np.int64)]])

# The check of a branch not taken passes: If(c) sums x[s:s+3] or all of x.
then_g = helper.make_graph(
    [const("zero", np.array([0], np.int64)),
     const("three", np.array([3], np.int64)),
     helper.make_node("Add", ["s", "zero"], ["st"]),
     helper.make_node("Add", ["s", "three"], ["en"]),
     helper.make_node("Slice", ["x", "st", "en"], ["w"], name="branch"),
     helper.make_node("ReduceSum", ["w"], ["r"], keepdims=0)],
    "then", [], [vi("r", F, [])])
else_g = helper.make_graph(
    [helper.make_node("ReduceSum", ["x"], ["r2"], keepdims=0)],
    "else", [], [vi("r2", F, [])])
branch = model([helper.make_node("If", ["c"], ["r"], then_branch=then_g,
                                 else_branch=else_g)],
               [vi("c", B, []), vi("x", F, [5]), vi("s", I64, [1])],
               [vi("r", F, [])])
write_set(PASS, "test_check_if_branch", branch,
          [[np.array(False), xs, np.array([3], np.int64)],
           [np.array(True), xs, np.array([2], np.int64)]])
write_set(FAIL, "test_check_if_branch", branch,
          [[np.array(True), xs, np.array([3], np.int64)]])

# A loop kept as a loop whose scan output is declared with 6 rows: M = 6
# stops there as ONNX does; M = 9 would give 9 rows (onnxruntime gives
# them), past the compiled bound.
body_b = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Cast", ["i"], ["fi"], to=F),
     helper.make_node("Add", ["y_in", "fi"], ["y_out"]),
     helper.make_node("Identity", ["y_out"], ["scan"])],
    "body", [vi("i", I64, []), vi("cond_in", B, []), vi("y_in", F, [3])],
    [vi("cond_out", B, []), vi("y_out", F, [3]), vi("scan", F, [3])])
bounded = model([helper.make_node("Loop", ["m", "", "y0"], ["y", "ys"],
                                  body=body_b, name="bounded")],
                [vi("m", I64, []), vi("y0", F, [3])],
                [vi("y", F, [3]), vi("ys", F, [6, 3])])
y0 = np.array([0.5, -1, 2], np.float32)
write_set(PASS, "test_check_loop_bound", bounded,
          [[np.array(m, np.int64), y0] for m in (2, 6)])
write_set(FAIL, "test_check_loop_bound", bounded,
          [[np.array(9, np.int64), y0]])

# A check in an inner loop's body is carried through both loops: the outer
# loop runs m times an inner loop of k iterations summing x[j:j+2] over x
# of 4 entries; k = 3 fits, k = 4 runs off in every outer iteration.
x4 = np.array([1, 2, 4, 8], np.float32)
inner = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"]),
     const("x", x4),
     const("ax0", np.array([0], np.int64)),
     const("two", np.array([2], np.int64)),
     helper.make_node("Unsqueeze", ["j", "ax0"], ["st"]),
     helper.make_node("Add", ["st", "two"], ["en"]),
     helper.make_node("Slice", ["x", "st", "en"], ["w"], name="inner_window"),
     helper.make_node("ReduceSum", ["w"], ["sw"], keepdims=0),
     helper.make_node("Add", ["a_in", "sw"], ["a_out"])],
    "inner", [vi("j", I64, []), vi("c_in", B, []), vi("a_in", F, [])],
    [vi("c_out", B, []), vi("a_out", F, [])])
outer = helper.make_graph(
    [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
     helper.make_node("Loop", ["k", "", "acc_in"], ["acc_out"], body=inner)],
    "outer", [vi("i", I64, []), vi("cond_in", B, []), vi("acc_in", F, [])],
    [vi("cond_out", B, []), vi("acc_out", F, [])])
nested = model([helper.make_node("Loop", ["m", "", "acc0"], ["acc"],
                                 body=outer)],
               [vi("m", I64, []), vi("k", I64, []), vi("acc0", F, [])],
               [vi("acc", F, [])])
write_set(PASS, "test_check_nested_loop", nested,
          [[np.array(2, np.int64), np.array(3, np.int64),
            np.array(0, np.float32)]])
write_set(FAIL, "test_check_nested_loop", nested,
          [[np.array(2, np.int64), np.array(4, np.int64),
            np.array(0, np.float32)]])
