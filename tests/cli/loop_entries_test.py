"""The CPU backend's loops kept as loops (docs/ControlFlow.md) through
every entry: model-runner runs each model of the hand-made `loops` set on
each of its data sets with the one-thread entry (NAME), -num-threads=2
(NAME_mt, which runs the one-thread schedule for a network with a loop)
and -profile on one and two threads (NAME_profile, NAME_mt_profile, which
tick the body's kernels once per iteration); every output must match the
set's expected outputs (onnxruntime's). Integer and Bool outputs exactly;
float ones within 1e-5 relative + 1e-6 absolute: the bodies add and sum a
few float32 values, which the CPU's vector reductions may associate
differently from onnxruntime.

  loop_entries_test.py MODEL_RUNNER SOURCE_DIR
"""
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

RUNNER, SRC = sys.argv[1], sys.argv[2]
MODES = {
    "1 thread": [],
    "2 threads": ["-num-threads=2"],
    "profile": ["-profile", "-iterations=2"],
    "profile, 2 threads": ["-profile", "-iterations=2", "-num-threads=2"],
}


def load(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def check(case, data, mode, flags):
    with tempfile.TemporaryDirectory() as out:
        inputs = sorted(glob.glob(os.path.join(data, "input_*.pb")))
        cmd = [RUNNER, "-model=" + os.path.join(case, "model.onnx"),
               "-backend=CPU", "-output-dir=" + out]
        cmd += ["-input=" + f for f in inputs] + flags
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode:
            return f"exited {run.returncode}: {run.stderr.strip()[-300:]}"
        for want in sorted(glob.glob(os.path.join(data, "output_*.pb"))):
            exp = load(want)
            got = load(os.path.join(out, os.path.basename(want)))
            if got.shape != exp.shape or got.dtype != exp.dtype:
                return f"{os.path.basename(want)}: {got.dtype}{got.shape}, " \
                       f"expected {exp.dtype}{exp.shape}"
            same = (np.allclose(got, exp, rtol=1e-5, atol=1e-6)
                    if exp.dtype.kind == "f" else np.array_equal(got, exp))
            if not same:
                return f"{os.path.basename(want)} differs"
    return None


fails = runs = 0
for case in sorted(glob.glob(os.path.join(SRC, "tests/onnx/handmade/loops/*/"))):
    for data in sorted(glob.glob(os.path.join(case, "test_data_set_*"))):
        for mode, flags in MODES.items():
            runs += 1
            err = check(case, data, mode, flags)
            if err:
                fails += 1
                name = os.path.basename(case.rstrip("/"))
                print(f"FAIL {name}/{os.path.basename(data)} ({mode}): {err}")
print(f"{runs - fails}/{runs} runs match")
sys.exit(1 if fails or not runs else 0)
