#!/usr/bin/env python3
"""Runs exported zoo models with onnxruntime and writes reference outputs.

Run with the project venv (it has onnxruntime):
    .venv/bin/python models/zoo/reference.py DIR [NAME ...]

For each DIR/NAME.onnx with DIR/NAME.input.pb it writes DIR/NAME.output.pb
(an ONNX TensorProto). Without names, every model in DIR is processed.
onnxruntime runs single-threaded with its graph optimizations disabled, so
the reference is its plain kernels: onnxruntime 1.19's Pad+AveragePool
fusion changes results when count_include_pad=0 (inception_v3's exported
Pad + AveragePool pairs), fixed upstream in onnxruntime PR #23190.
"""
import glob
import os
import sys

import onnx
import onnx.numpy_helper
import onnxruntime as ort


def main():
    d = sys.argv[1]
    names = sys.argv[2:] or [os.path.basename(p)[:-5]
                             for p in sorted(glob.glob(os.path.join(d, "*.onnx")))]
    for name in names:
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(os.path.join(d, name + ".onnx"), so,
                                    providers=["CPUExecutionProvider"])
        x = onnx.numpy_helper.to_array(
            onnx.load_tensor(os.path.join(d, name + ".input.pb")))
        (y,) = sess.run(None, {sess.get_inputs()[0].name: x})
        t = onnx.numpy_helper.from_array(y, sess.get_outputs()[0].name)
        with open(os.path.join(d, name + ".output.pb"), "wb") as f:
            f.write(t.SerializeToString())
        print("%s: output %s, max |y| %.4g" % (name, y.shape, abs(y).max()))


if __name__ == "__main__":
    main()
