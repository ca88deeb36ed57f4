#!/usr/bin/env python3
"""Make reference outputs for the digits test inputs with ONNX Runtime.

Run with the repo's virtualenv (it has onnxruntime):

    /work/main/.venv/bin/python models/digits/make_reference.py

For every test_data/digit-<label>.input.pb, runs digits.onnx on CPUExecutionProvider
and writes test_data/digit-<label>.output.pb (ONNX TensorProto "logits", float32 [1,10]).
"""
import glob
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    sess = ort.InferenceSession(os.path.join(HERE, "digits.onnx"),
                                providers=["CPUExecutionProvider"])
    in_name = sess.get_inputs()[0].name
    out_name = sess.get_outputs()[0].name
    assert (in_name, out_name) == ("input", "logits"), (in_name, out_name)

    paths = sorted(glob.glob(os.path.join(HERE, "test_data", "digit-*.input.pb")))
    assert paths, "no test_data/digit-*.input.pb; run train.py first"
    n_right = 0
    for path in paths:
        label = int(os.path.basename(path)[len("digit-"):-len(".input.pb")])
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        x = numpy_helper.to_array(t)
        assert x.dtype == np.float32 and x.shape == (1, 1, 8, 8), (x.dtype, x.shape)
        (logits,) = sess.run([out_name], {in_name: x})
        logits = np.asarray(logits, dtype=np.float32)
        assert logits.shape == (1, 10), logits.shape
        out = numpy_helper.from_array(logits, name="logits")
        with open(path.replace(".input.pb", ".output.pb"), "wb") as f:
            f.write(out.SerializeToString())
        pred = int(logits.argmax())
        n_right += pred == label
        print(f"digit-{label}: predicted {pred} {'OK' if pred == label else 'WRONG'}  "
              f"logits {np.array2string(logits[0], precision=3, max_line_width=200)}")
    print(f"{n_right}/{len(paths)} correct (onnxruntime {ort.__version__})")


if __name__ == "__main__":
    main()
