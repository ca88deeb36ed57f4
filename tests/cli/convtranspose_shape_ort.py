"""ConvTranspose with an output_shape past the full result (the extra end
rows and columns are output padding: bias only) against onnxruntime on the
Interpreter and CPU backends, 1-D and 2-D, with and without bias and
groups. Within 1e-5 of the largest |value| (float32 sums of a few
products). The 2-D cases exceed by one per dim: onnxruntime 1.19 places a
larger excess of a 2-D result elsewhere than at the end, where the node
test (test_convtranspose_output_shape) and its 1-D results put it."""
import sys

import numpy as np
from onnx import helper as h

from newer_ops_harness import check_cases, model, with_ort_outputs

RNG = np.random.default_rng(3)


def case(name, x, w, b=None, **attrs):
    consts = {"w": w}
    ins = ["x", "w"]
    if b is not None:
        consts["b"] = b
        ins.append("b")
    m = model([h.make_node("ConvTranspose", ins, ["y"], **attrs)],
              {"x": x}, consts, 13)
    return name, m, {"x": x}


def cases():
    f = np.float32
    yield case("ct_2d_past_full_bias", RNG.standard_normal((1, 2, 3, 3), f),
               RNG.standard_normal((2, 3, 3, 3), f),
               RNG.standard_normal(3, f), strides=[3, 2],
               output_shape=[10, 8])
    yield case("ct_2d_past_full_groups", RNG.standard_normal((2, 4, 4, 3), f),
               RNG.standard_normal((4, 1, 2, 2), f), strides=[2, 2],
               group=2, output_shape=[9, 7])
    yield case("ct_1d_past_full", RNG.standard_normal((1, 1, 5), f),
               RNG.standard_normal((1, 2, 3), f), RNG.standard_normal(2, f),
               strides=[2], output_shape=[13])


def main():
    runner, work = sys.argv[1], sys.argv[2]
    checked = with_ort_outputs(work, cases())
    fails = check_cases(runner, work, checked, 24)
    print("%d failure(s)" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
