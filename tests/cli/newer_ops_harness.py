"""What newer_opsets_ort.py and newer_ops_ref.py share: building a
one-graph model, running it through model-runner on each backend, comparing
outputs with a reference, and checking one-line errors."""
import os
import subprocess

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

F = T.FLOAT
ELEM = {np.dtype(t): e for t, e in [
    (np.float32, F), (np.bool_, T.BOOL), (np.int64, T.INT64),
    (np.int32, T.INT32), (np.int8, T.INT8), (np.uint8, T.UINT8),
    (np.uint16, T.UINT16), (np.uint64, T.UINT64)]}
BACKENDS = ["Interpreter", "CPU"]


def model(nodes, ins, consts, opset, outs=("y",), out_type=F):
    """A graph of `nodes` with inputs `ins` and initializers `consts`
    (name -> array) and outputs `outs` of `out_type`."""
    def info(n, v):
        return h.make_tensor_value_info(n, ELEM[v.dtype], v.shape)
    g = h.make_graph(
        nodes, "g", [info(n, v) for n, v in ins.items()],
        [h.make_tensor_value_info(o, out_type, None) for o in outs],
        [nh.from_array(v, n) for n, v in consts.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)],
                        ir_version=10 if opset > 20 else 9)


def run(runner, path, backend, feeds, outdir, nout):
    """(outputs, "") of model-runner on `path`, or (None, its output)."""
    os.makedirs(outdir, exist_ok=True)
    args = [runner, "-model=" + path, "-backend=" + backend,
            "-output-dir=" + outdir]
    for n, v in feeds.items():
        f = os.path.join(outdir, n + ".pb")
        with open(f, "wb") as fh:
            fh.write(nh.from_array(v, n).SerializeToString())
        args.append("-input=%s=%s" % (n, f))
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if p.returncode:
        return None, p.stdout.strip()
    return [nh.to_array(onnx.load_tensor(
        os.path.join(outdir, "output_%d.pb" % i))) for i in range(nout)], ""


def compare(name, got, want, any_float=False):
    """None when `got` matches `want`: same shapes and types (with
    `any_float`, any float type for a float reference: float64 numpy
    references), equal integers and infinities, finite floats within 1e-5
    of the largest finite |want|; else what differs."""
    for g, w in zip(got, want):
        floats = (np.issubdtype(g.dtype, np.floating) and
                  np.issubdtype(w.dtype, np.floating))
        if g.shape != w.shape or not (g.dtype == w.dtype or
                                      (any_float and floats)):
            return "%s: got %s %s, want %s %s" % (name, g.dtype, g.shape,
                                                   w.dtype, w.shape)
        if not np.issubdtype(w.dtype, np.floating):
            if not np.array_equal(g, w):
                return "%s: integer results differ" % name
            continue
        fin = np.isfinite(w)
        if not np.array_equal(g[~fin], w[~fin]):
            return "%s: infinities differ" % name
        if not fin.any():
            continue
        err = np.abs(g[fin] - w[fin]).max() / max(np.abs(w[fin]).max(), 1e-30)
        if not err <= 1e-5:
            return "%s: relative error %.3g" % (name, err)
    return None


def with_ort_outputs(work, cases):
    """[(name, model, feeds, onnxruntime's outputs)] for `cases` of
    (name, model, feeds); each model is written to `work` first."""
    import onnxruntime as ort
    ort.set_default_logger_severity(3)
    os.makedirs(work, exist_ok=True)
    checked = []
    for name, m, feeds in cases:
        path = os.path.join(work, name + ".onnx")
        with open(path, "wb") as f:
            f.write(m.SerializeToString())
        want = ort.InferenceSession(
            path, providers=["CPUExecutionProvider"]).run(None, feeds)
        checked.append((name, m, feeds, want))
    return checked


def check_cases(runner, work, cases, width, any_float=False):
    """Runs each (name, model, feeds, want) on every backend; the number of
    failures."""
    fails = 0
    for name, m, feeds, want in cases:
        path = os.path.join(work, name + ".onnx")
        onnx.save(m, path)
        for backend in BACKENDS:
            got, err = run(runner, path, backend, feeds,
                           os.path.join(work, name + "." + backend),
                           len(want))
            problem = err or compare(name, got, want, any_float)
            print("%-*s %-11s %s" % (width, name, backend, problem or "ok"))
            fails += problem is not None
    return fails


def check_one_line_errors(runner, work, bad, width):
    """Each (name, model, text) must fail on the CPU with exit status 1 and
    one line containing text; the number of failures."""
    fails = 0
    for name, m, want in bad:
        path = os.path.join(work, name + ".onnx")
        onnx.save(m, path)
        p = subprocess.run([runner, "-model=" + path, "-backend=CPU"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        lines = p.stdout.strip().splitlines()
        ok = p.returncode == 1 and len(lines) == 1 and want in lines[0]
        print("%-*s %s: %s" % (width, name, "ok" if ok else "FAIL",
                               p.stdout.strip()))
        fails += not ok
    return fails
