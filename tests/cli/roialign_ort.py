"""RoiAlign against onnxruntime on the Interpreter and CPU backends: avg and
max modes, half_pixel and output_half_pixel, a spatial_scale, rois partly
outside the image and smaller than a pixel, several images. Within 1e-5 of
the largest |value| (sums of four products and a mean over a few samples,
float32 both sides). sampling_ratio 0 must fail with one line."""
import sys

import numpy as np
from onnx import TensorProto as T, helper as h

from newer_ops_harness import (check_cases, check_one_line_errors, model,
                               with_ort_outputs)

RNG = np.random.default_rng(11)


def case(name, opset, x, rois, batch, **attrs):
    m = model([h.make_node("RoiAlign", ["x", "r", "b"], ["y"], **attrs)],
              {"x": x, "r": rois, "b": batch}, {}, opset)
    return name, m, {"x": x, "r": rois, "b": batch}


def cases():
    x = RNG.standard_normal((2, 3, 7, 9)).astype(np.float32)
    rois = np.array([[0.5, 1.0, 6.0, 5.5], [-2.0, -1.5, 3.0, 2.0],
                     [7.0, 4.0, 12.0, 9.0], [2.2, 2.4, 2.6, 2.5],
                     [0.0, 0.0, 8.0, 6.0]], np.float32)
    batch = np.array([0, 1, 1, 0, 1], np.int64)
    yield case("roialign_avg_half_pixel_16", 16, x, rois, batch,
               output_height=3, output_width=4, sampling_ratio=2)
    yield case("roialign_avg_output_half_pixel_16", 16, x, rois, batch,
               output_height=2, output_width=2, sampling_ratio=3,
               coordinate_transformation_mode="output_half_pixel")
    yield case("roialign_max_scale_16", 16, x, rois * 2, batch,
               output_height=3, output_width=3, sampling_ratio=2,
               spatial_scale=0.5, mode="max")
    yield case("roialign_default_ctm_10", 10, x, rois, batch,
               output_height=2, output_width=3, sampling_ratio=1)


def main():
    runner, work = sys.argv[1], sys.argv[2]
    checked = with_ort_outputs(work, cases())
    fails = check_cases(runner, work, checked, 34)
    name, m, _ = case("roialign_adaptive", 16,
                      np.zeros((1, 1, 4, 4), np.float32),
                      np.zeros((1, 4), np.float32), np.zeros(1, np.int64),
                      output_height=2, output_width=2)
    fails += check_one_line_errors(runner, work, [
        (name, m, "sampling_ratio 0 is not supported")], 34)
    print("%d failure(s)" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
