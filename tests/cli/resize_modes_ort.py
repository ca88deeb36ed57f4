"""Resize's coordinate_transformation_mode tf_half_pixel_for_nn (nearest,
with nearest_mode round_prefer_floor and floor; up and down, 2-D and 4-D)
against onnxruntime on the Interpreter and CPU backends: outputs are copies
of input elements, so they must be equal. The nearest modes it cannot take
must fail with one line, and so must the mode past opset 12, which
dropped it."""
import sys

import numpy as np
from onnx import helper as h

from newer_ops_harness import (check_cases, check_one_line_errors, model,
                               with_ort_outputs)

RNG = np.random.default_rng(5)


def case(name, x, sizes, **attrs):
    m = model([h.make_node("Resize", ["x", "roi", "sc", "s"], ["y"],
                           coordinate_transformation_mode="tf_half_pixel_for_nn",
                           mode="nearest", **attrs)],
              {"x": x}, {"roi": np.zeros(0, np.float32),
                         "sc": np.zeros(0, np.float32),
                         "s": np.array(sizes, np.int64)}, 11)
    return name, m, {"x": x}


def cases():
    x4 = RNG.standard_normal((1, 2, 5, 7)).astype(np.float32)
    yield case("tfnn_down_prefer_floor", x4, [1, 2, 3, 4])
    # 12 / 7 puts no point on a tie (2o + 1) 7 / 24 = k + 1/2: a tie at
    # a scale that float does not hold rounds by the float scale.
    yield case("tfnn_up_prefer_floor", x4, [1, 2, 10, 12])
    yield case("tfnn_up_floor", x4, [1, 2, 9, 14], nearest_mode="floor")
    x2 = RNG.standard_normal((6, 9)).astype(np.float32)
    yield case("tfnn_2d_down_floor", x2, [4, 4], nearest_mode="floor")


def main():
    runner, work = sys.argv[1], sys.argv[2]
    checked = with_ort_outputs(work, cases())
    fails = check_cases(runner, work, checked, 24)
    x = np.zeros((1, 1, 2, 2), np.float32)
    bad = [(n, case(n, x, [1, 1, 4, 4], nearest_mode=nm)[1],
            "tf_half_pixel_for_nn is supported with mode nearest")
           for n, nm in [("tfnn_ceil", "ceil"),
                         ("tfnn_prefer_ceil", "round_prefer_ceil")]]
    m13 = case("tfnn_13", x, [1, 1, 4, 4])[1]
    m13.opset_import[0].version = 13
    bad.append(("tfnn_13", m13, "unsupported mode 'tf_half_pixel_for_nn'"))
    fails += check_one_line_errors(runner, work, bad, 24)
    print("%d failure(s)" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
