#!/usr/bin/env python3
"""OpenVINO's per-layer profile of one model, to set beside Ember's
`model-runner -backend=CPU -profile -profile-stat=min`.

    ov_profile.py MODEL.onnx [--threads N] [--iters N] [--top N]
                  [--input FILE.pb|FILE.npy ...]

Compiles MODEL for the CPU plugin as ov_worker.py does (f32 inference
precision, one stream, the LATENCY hint, INFERENCE_NUM_THREADS) with
PERF_COUNT on, runs it ITERS times and keeps each layer's fastest run (as
-profile-stat=min does for Ember's kernels: steadier on a loaded host).
Prints the sum of those minima by layer type and OpenVINO's kernel choice,
then the TOP slowest layers. Inputs: the given files in graph order, else
uniform [0, 1) floats and zero integers. Dropout nodes of ratio 0 with
training_mode, which OpenVINO's ONNX frontend rejects, keep only their data
input (bench.ov_model does the same for scripts/bench).
Run it with .venv-bench's python (openvino is installed there).
"""
import argparse
import collections
import os
import sys
import tempfile

import numpy as np
import onnx
import openvino as ov
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import zero_dropouts  # noqa: E402


def load_input(path):
    if path.endswith(".npy"):
        return np.load(path)
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def default_input(port):
    shape = list(port.get_partial_shape().to_shape())
    if port.get_element_type().is_real():
        return np.random.default_rng(0).random(shape, dtype=np.float32)
    return np.zeros(shape, np.int64)


def compiled_model(path, threads):
    model = onnx.load(path)
    for n in zero_dropouts(model):
        del n.input[1:]
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "model.onnx")
        onnx.save(model, copy)
        return ov.Core().compile_model(copy, "CPU", {
            "INFERENCE_PRECISION_HINT": "f32", "NUM_STREAMS": "1",
            "PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": threads,
            "PERF_COUNT": "YES"})


def layer_minima(compiled, feed, iters):
    """{layer name: (fastest us, type, exec type)} over iters runs."""
    request = compiled.create_infer_request()
    best = {}
    for _ in range(iters):
        request.infer(feed)
        for p in request.get_profiling_info():
            us = p.real_time.total_seconds() * 1e6
            if p.node_name not in best or us < best[p.node_name][0]:
                best[p.node_name] = (us, p.node_type, p.exec_type)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--input", action="append", default=[])
    args = ap.parse_args()
    compiled = compiled_model(args.model, args.threads)
    feed = [load_input(p) for p in args.input] or \
        [default_input(p) for p in compiled.inputs]
    best = layer_minima(compiled, feed, args.iters)
    groups = collections.defaultdict(lambda: [0.0, 0])
    for us, kind, impl in best.values():
        if us > 0:
            groups[(kind, impl)][0] += us
            groups[(kind, impl)][1] += 1
    total = sum(g[0] for g in groups.values())
    print("OpenVINO %s, %d thread(s), fastest of %d runs per layer: %.3f ms"
          % (ov.get_version(), args.threads, args.iters, total / 1e3))
    print("%10s %6s %5s  %s" % ("ms", "%", "n", "layer type / kernel"))
    for (kind, impl), (us, n) in sorted(groups.items(), key=lambda g: -g[1][0]):
        print("%10.3f %6.2f %5d  %s %s" % (us / 1e3, 100 * us / total, n,
                                           kind, impl))
    print("%10s  %-20s %-22s %s" % ("ms", "type", "kernel", "layer"))
    rows = sorted(best.items(), key=lambda r: -r[1][0])[:args.top]
    for name, (us, kind, impl) in rows:
        print("%10.4f  %-20s %-22s %s" % (us / 1e3, kind, impl, name))


if __name__ == "__main__":
    main()
