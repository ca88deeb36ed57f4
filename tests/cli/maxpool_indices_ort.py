"""MaxPool's Indices output (the flat index of each window's maximum)
against onnxruntime on the Interpreter and CPU backends: 1-D, 2-D and 3-D
windows with pads, strides, dilations, ceil_mode and storage_order, and
ties (equal values: the first in window order wins). Indices must be equal;
Y within 1e-5 (it is a copy of an input element)."""
import sys

import numpy as np
from onnx import TensorProto as T, helper as h

from newer_ops_harness import (check_cases, check_one_line_errors, model,
                               with_ort_outputs)

RNG = np.random.default_rng(7)


def case(name, shape, ties=False, **attrs):
    a = RNG.standard_normal(shape).astype(np.float32) - 1.0
    if ties:
        a = np.round(a).astype(np.float32)
    m = model([h.make_node("MaxPool", ["a"], ["y", "i"], **attrs)],
              {"a": a}, {}, 12, ("y", "i"))
    m.graph.output[1].type.tensor_type.elem_type = T.INT64
    return name, m, {"a": a}


def cases():
    yield case("mp_1d_pads_strides", (2, 3, 11), kernel_shape=[3],
               pads=[1, 2], strides=[2])
    yield case("mp_2d_dilations_ceil", (1, 2, 9, 8), kernel_shape=[3, 2],
               dilations=[2, 1], strides=[2, 2], ceil_mode=1)
    yield case("mp_2d_same_upper_col_major", (2, 2, 7, 6), kernel_shape=[3, 3],
               auto_pad="SAME_UPPER", strides=[2, 1], storage_order=1)
    yield case("mp_2d_ties", (1, 3, 6, 6), ties=True, kernel_shape=[2, 3],
               pads=[1, 1, 0, 1])
    yield case("mp_3d_pads", (1, 2, 5, 6, 4), kernel_shape=[2, 3, 2],
               pads=[1, 0, 1, 0, 1, 1], strides=[1, 2, 2])
    yield case("mp_3d_col_major", (1, 1, 4, 5, 3), kernel_shape=[2, 2, 2],
               storage_order=1)


def check_errors(runner, work):
    a = np.zeros((1, 1, 4, 4), np.int8)
    m = model([h.make_node("MaxPool", ["a"], ["y", "i"], kernel_shape=[2, 2])],
              {"a": a}, {}, 12, ("y", "i"))
    return check_one_line_errors(runner, work, [
        ("mp_indices_int8", m, "the Indices output needs a float input")],
        30)


def main():
    runner, work = sys.argv[1], sys.argv[2]
    checked = with_ort_outputs(work, cases())
    fails = check_cases(runner, work, checked, 30)
    fails += check_errors(runner, work)
    print("%d failure(s)" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
