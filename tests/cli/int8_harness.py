"""What the integer-product tests (int8_kernels_test.py,
int8_requant_test.py) share: random integer tensors, a one-input ONNX
model, and the check that runs a model on the Interpreter and on the CPU
for the host, without AMX-INT8, without AVX512-VNNI (the widening kernel,
16 lanes) and for an AVX2 CPU (8 lanes), comparing the outputs element for
element."""
import os
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

TYPES = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8}
# The CPU runs: host (AMX tiles for convolutions where it has AMX-INT8,
# vpdpbusd where it has AVX512-VNNI), without AMX-INT8, 16 lanes without
# VNNI, 8 lanes (AVX2).
CPU_RUNS = {"CPU": [], "CPU-noamx": ["-mattr=-amx-int8"],
            "CPU-novnni": ["-mattr=-avx512vnni,-amx-int8"],
            "CPU-avx2": ["-mcpu=haswell"]}


def values(rng, dtype, shape):
    """Integers over the whole range of dtype, drawn from rng."""
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


def one_input_model(nodes, name, x, y_type, inits):
    """Input x (of x's type and shape), output y of y_type, opset 13."""
    g = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info(
            "x", TYPES[x.dtype.type], x.shape)],
        [helper.make_tensor_value_info("y", y_type, None)],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def run(runner, backend, extra, path, xpath, outdir):
    """(output 0 or None, error text, stdout) of one model-runner run."""
    args = [runner, "-model=" + path, "-backend=" + backend,
            "-output-dir=" + outdir, "-input=x=" + xpath] + extra
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip(), ""
    return numpy_helper.to_array(onnx.load_tensor(
        os.path.join(outdir, "output_0.pb"))), "", r.stdout


def check(runner, work, name, m, x, flags=(), on_cpu=None, runs=None):
    """Runs model m on input x on the Interpreter and every CPU_RUNS entry
    (or of runs) with flags; returns (failure lines, the Interpreter's
    output or None). on_cpu(label, stdout) may return more failure lines
    per CPU run."""
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    path, xpath = os.path.join(d, "model.onnx"), os.path.join(d, "x.pb")
    onnx.save(m, path)
    onnx.save_tensor(numpy_helper.from_array(x, "x"), xpath)
    ref, err, _ = run(runner, "Interpreter", list(flags), path, xpath,
                      os.path.join(d, "Interpreter"))
    if ref is None:
        return ["%s on Interpreter: %s" % (name, err)], None
    failures = []
    for label, extra in (runs or CPU_RUNS).items():
        got, err, out = run(runner, "CPU", list(flags) + extra, path, xpath,
                            os.path.join(d, label))
        if got is None:
            failures.append("%s on %s: %s" % (name, label, err))
            continue
        if on_cpu:
            failures += on_cpu(label, out)
        failures += compare(name, label, got, ref)
    return failures, ref


def compare(name, label, got, ref):
    """Failure lines unless got equals ref in type, shape and every
    element."""
    if got.shape != ref.shape or got.dtype != ref.dtype:
        return ["%s on %s: %s %s, want %s %s" % (
            name, label, got.dtype, got.shape, ref.dtype, ref.shape)]
    if (got != ref).any():
        return ["%s on %s: %d of %d elements differ" % (
            name, label, int((got != ref).sum()), ref.size)]
    return []


def report(count, failures):
    """Prints the failure lines and the summary; the exit status."""
    for f in failures:
        print("FAIL " + f)
    print("%d models, %d failures" % (count, len(failures)))
    return 1 if failures else 0
