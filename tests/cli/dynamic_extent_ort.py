"""Outputs whose extent depends on the data, with the model declaring no
size for it (docs/RuntimeInputs.md): NonZero and Compress (run-time and
computed operands), Unique, NonMaxSuppression, TopK with K fed at run
time, and chains through the ops that keep the axis
(Transpose, Gather, GatherND, Cast, broadcast Add, Unsqueeze, Squeeze),
against onnxruntime through model-runner -output-dir on the Interpreter and
CPU backends. The same model runs with data of different counts, zero
included; integer results must be equal, float ones within 1e-5 of the
largest |value| (they are copies of the input). Consumers that do not keep
the axis must fail with one line naming the node."""
import sys

import numpy as np
from onnx import TensorProto as T, helper as h

from newer_ops_harness import (check_cases, check_one_line_errors, model,
                               with_ort_outputs)

RNG = np.random.default_rng(40)
I64 = T.INT64


def sparse(shape, frac):
    """Floats with about `frac` of them zero."""
    x = RNG.standard_normal(shape).astype(np.float32)
    x[RNG.random(shape) < frac] = 0
    return x


def nonzero_models():
    nz = model([h.make_node("NonZero", ["x"], ["y"])],
               {"x": sparse((3, 5), .5)}, {}, 13, out_type=I64)
    # torch's x.nonzero(): NonZero -> Transpose.
    nzt = model([h.make_node("NonZero", ["x"], ["i"]),
                 h.make_node("Transpose", ["i"], ["y"], perm=[1, 0])],
                {"x": sparse((4, 3), .5)}, {}, 13, out_type=I64)
    # NonZero -> Transpose -> Gather of rows of a table by the indices.
    table = RNG.standard_normal((4, 6)).astype(np.float32)
    chain = model([h.make_node("NonZero", ["x"], ["i"]),
                   h.make_node("Transpose", ["i"], ["t"], perm=[1, 0]),
                   h.make_node("Gather", ["w", "t"], ["y"], axis=0)],
                  {"x": sparse((4, 3), .5)}, {"w": table}, 13)
    # torch's x[x > 0.5]: Greater -> NonZero -> Transpose -> GatherND.
    mask = model([h.make_node("Greater", ["x", "c"], ["m"]),
                  h.make_node("NonZero", ["m"], ["i"]),
                  h.make_node("Transpose", ["i"], ["t"], perm=[1, 0]),
                  h.make_node("GatherND", ["x", "t"], ["y"])],
                 {"x": sparse((3, 4), 0)},
                 {"c": np.array(0.5, np.float32)}, 13)
    # Cast, a broadcast Add, Unsqueeze and Squeeze keep the axis.
    ew = model([h.make_node("NonZero", ["x"], ["i"]),
                h.make_node("Cast", ["i"], ["f"], to=T.FLOAT),
                h.make_node("Add", ["f", "b"], ["s"]),
                h.make_node("Unsqueeze", ["s", "a"], ["u"]),
                h.make_node("Squeeze", ["u", "a"], ["y"])],
               {"x": sparse((2, 3, 2), .5)},
               {"b": np.array([[10.], [20.], [30.]], np.float32),
                "a": np.array([0], np.int64)}, 13)
    # keep[:3]: a prefix of the counted axis holds min(count, 3) rows.
    prefix = model([h.make_node("NonZero", ["x"], ["i"]),
                    h.make_node("Transpose", ["i"], ["t"], perm=[1, 0]),
                    h.make_node("Slice", ["t", "s0", "e3", "a0"], ["y"])],
                   {"x": sparse((4, 3), .5)},
                   {"s0": np.array([0], np.int64),
                    "e3": np.array([3], np.int64),
                    "a0": np.array([0], np.int64)}, 13, out_type=I64)
    return [("nonzero", nz, (3, 5)), ("nonzero_transpose", nzt, (4, 3)),
            ("nonzero_prefix", prefix, (4, 3)),
            ("nonzero_gather", chain, (4, 3)), ("mask_gathernd", mask, (3, 4)),
            ("nonzero_cast_add", ew, (2, 3, 2))]


def compress_models(n):
    """Compress along axis 1 and flattened, with a condition of n entries,
    and along axis 0 by a condition computed in the graph."""
    ax = model([h.make_node("Compress", ["x", "c"], ["y"], axis=1)],
               {"x": sparse((3, 6), 0), "c": np.ones(n, np.bool_)}, {}, 11)
    flat = model([h.make_node("Compress", ["x", "c"], ["y"])],
                 {"x": sparse((2, 3), 0), "c": np.ones(n, np.bool_)}, {}, 11)
    comp = model([h.make_node("Greater", ["x", "z"], ["c"]),
                  h.make_node("Compress", ["x", "c"], ["y"], axis=0)],
                 {"x": sparse((7,), 0)}, {"z": np.array(0, np.float32)}, 11)
    return ax, flat, comp


def other_models():
    """Unique (sorted, unsorted along an axis), NonMaxSuppression, TopK with
    K fed at run time, each with its inputs and a data maker."""
    uq = h.make_node("Unique", ["x"], ["y", "i", "v", "c"], sorted=1)
    uniq = model([uq], {"x": np.zeros(9, np.float32)}, {}, 11,
                 outs=("y", "i", "v", "c"))
    uniq.graph.output[1].type.tensor_type.elem_type = I64
    uniq.graph.output[2].type.tensor_type.elem_type = I64
    uniq.graph.output[3].type.tensor_type.elem_type = I64
    ua = h.make_node("Unique", ["x"], ["y"], sorted=0, axis=1)
    uniq_axis = model([ua], {"x": np.zeros((2, 6), np.float32)}, {}, 11)
    nms = model([h.make_node("NonMaxSuppression",
                             ["b", "s", "mo", "iou", "st"], ["y"])],
                {"b": np.zeros((2, 6, 4), np.float32),
                 "s": np.zeros((2, 2, 6), np.float32)},
                {"mo": np.array([3], np.int64),
                 "iou": np.array([.3], np.float32),
                 "st": np.array([.5], np.float32)}, 11, out_type=I64)
    topk = model([h.make_node("TopK", ["x", "k"], ["y", "i"], axis=1)],
                 {"x": np.zeros((2, 5), np.float32),
                  "k": np.array([1], np.int64)}, {}, 11, outs=("y", "i"))
    topk.graph.output[1].type.tensor_type.elem_type = I64

    def ints(shape, top):
        return RNG.integers(0, top, shape).astype(np.float32)

    def boxes():
        xy = RNG.random((2, 6, 2)).astype(np.float32) * 3
        return np.concatenate([xy, xy + 1], 2)
    return [
        ("unique", uniq, lambda: {"x": ints(9, 4)}),
        ("unique_axis", uniq_axis, lambda: {"x": ints((2, 6), 2)}),
        ("nms", nms, lambda: {"b": boxes(),
                              "s": RNG.random((2, 2, 6)).astype(np.float32)}),
        ("topk_k", topk, lambda: {
            "x": RNG.standard_normal((2, 5)).astype(np.float32),
            "k": np.array([RNG.integers(0, 6)], np.int64)})]


def cases():
    for name, m, data in other_models():
        for i in range(3):
            yield "%s_%d" % (name, i), m, data()
    for name, m, shape in nonzero_models():
        for tag, frac in [("half", .5), ("most", .1), ("none", 1.0)]:
            x = sparse(shape, frac)
            if name == "mask_gathernd" and frac == 1.0:
                x = -np.abs(x) - 1  # nothing above 0.5
            yield "%s_%s" % (name, tag), m, {"x": x}
    for tag, cond in [("some", [1, 0, 0, 1, 1, 0]), ("all", [1] * 6),
                      ("none", [0] * 6), ("short", [0, 1, 1])]:
        c = np.array(cond, np.bool_)
        ax, flat, comp = compress_models(len(cond))
        yield "compress_axis_" + tag, ax, {"x": sparse((3, 6), 0), "c": c}
        yield "compress_flat_" + tag, flat, {"x": sparse((2, 3), 0), "c": c}
    for tag in ["a", "b"]:
        yield "compress_computed_" + tag, comp, {"x": sparse((7,), 0)}


def errors():
    x = {"x": sparse((3, 4), .5)}
    # Reductions over the counted axis mask the entries past it with their
    # identity (handmade test_reduce_count); integers have no -inf for Max.
    red = model([h.make_node("NonZero", ["x"], ["i"]),
                 h.make_node("ReduceMax", ["i"], ["y"], name="max")],
                x, {}, 13, out_type=I64)
    # (Shape holds the count: handmade test_shape_of_count.)
    shp = model([h.make_node("NonZero", ["x"], ["i"]),
                 h.make_node("Size", ["i"], ["y"], name="size")],
                x, {}, 13, out_type=I64)
    # The other operand spans the dynamic axis with 4 entries.
    add = model([h.make_node("NonZero", ["x"], ["i"]),
                 h.make_node("Add", ["i", "b"], ["y"], name="add")],
                x, {"b": np.zeros((2, 12), np.int64)}, 13, out_type=I64)
    # Concat along another axis than the counted one of values counted by
    # two sources (along it: handmade test_concat_counts).
    cat = model([h.make_node("NonZero", ["x"], ["i"]),
                 h.make_node("Neg", ["x"], ["n"]),
                 h.make_node("NonZero", ["n"], ["j"]),
                 h.make_node("Concat", ["i", "j"], ["y"], axis=0,
                             name="cat")],
                x, {}, 13, out_type=I64)
    # A negative end counts from the bound; before opset 10 the lists are
    # attributes (start 1 is not a prefix).
    def cut(opset, end, **attrs):
        ins = ["t"] if attrs else ["t", "s0", "e", "a0"]
        return model([h.make_node("NonZero", ["x"], ["i"]),
                      h.make_node("Transpose", ["i"], ["t"], perm=[1, 0]),
                      h.make_node("Slice", ins, ["y"], name="cut", **attrs)],
                     x, {} if attrs else
                     {"s0": np.array([0], np.int64), "e": np.array(end),
                      "a0": np.array([0], np.int64)}, opset, out_type=I64)
    neg = cut(13, [-1])
    v9 = cut(9, None, starts=[1], ends=[10], axes=[0])
    why = "has a data-dependent extent on axis 1"
    why0 = "node 'cut' (Slice): input 't' has a data-dependent extent on axis 0"
    return [("err_reducemax_int", red,
             "node 'max' (ReduceMax): integer values reduced over a "
             "data-dependent extent"),
            ("err_size", shp, "node 'size' (Size): input 'i' " + why),
            ("err_add_span", add, "node 'add' (Add): input 'b' spans a "
             "data-dependent extent"),
            ("err_concat_counts", cat,
             "node 'cat' (Concat): input 'j' " + why),
            ("err_slice_negative_end", neg, why0),
            ("err_slice_attr_start", v9, why0)]


def main():
    runner, work = sys.argv[1], sys.argv[2]
    checked = with_ort_outputs(work, cases())
    fails = check_cases(runner, work, checked, 32)
    fails += check_one_line_errors(runner, work, errors(), 32)
    print("%d failure(s)" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
