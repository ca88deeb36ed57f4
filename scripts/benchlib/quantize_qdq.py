#!/usr/bin/env python3
"""Quantizes an fp32 ONNX CNN as a user would with onnxruntime's own tool.

Usage: quantize_qdq.py IN.onnx OUT.onnx [CALIBRATION_SAMPLES]

onnxruntime.quantization.quantize_static in QDQ format, per-channel Int8
weights, UInt8 activations (its defaults otherwise), calibrated (MinMax) on
CALIBRATION_SAMPLES (default 8) inputs drawn from N(0, 1) with a fixed seed:
the int8 rows of the benchmark and the exactness checks need a
representative QDQ file, not an accurate one.
"""
import os
import sys

import numpy as np
import onnx
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                      QuantType, quantize_static)
from onnxruntime.quantization.shape_inference import quant_pre_process


class RandomReader(CalibrationDataReader):
    def __init__(self, model, samples):
        inp = model.graph.input[0]
        dims = [d.dim_value or 1 for d in inp.type.tensor_type.shape.dim]
        rng = np.random.default_rng(0)
        self.feeds = iter([{inp.name: rng.standard_normal(dims).astype(
            np.float32)} for _ in range(samples)])

    def get_next(self):
        return next(self.feeds, None)


def main():
    src, dst = sys.argv[1:3]
    samples = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    pre = dst + ".pre.onnx"
    quant_pre_process(src, pre, skip_symbolic_shape=True)
    quantize_static(pre, dst, RandomReader(onnx.load(pre), samples),
                    quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8)
    os.remove(pre)
    return 0


if __name__ == "__main__":
    sys.exit(main())
