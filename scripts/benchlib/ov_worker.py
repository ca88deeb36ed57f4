#!/usr/bin/env python3
"""OpenVINO side of scripts/bench: time one model.

    ov_worker.py MODEL.onnx INPUTS THREADS WARMUP ITERS [PRECISION]

INPUTS: comma-separated .npy files, one per graph input in graph order.
Reads the ONNX file with OpenVINO's ONNX frontend and compiles it for the
CPU plugin with f32 inference precision (no bf16/fp16 down-conversion on
CPUs that have them; PRECISION bf16 asks for bf16 instead), one stream,
INFERENCE_NUM_THREADS=THREADS and the
LATENCY performance hint; then the same warm-up and timed synchronous runs
as ort_worker.py. Prints one JSON line {"ms": [...], "openvino": version,
"compile_s": s, "config": the properties the compiled model reports}.
"""
import json
import sys
import time

import numpy as np
import openvino as ov

CONFIG = {
    "INFERENCE_PRECISION_HINT": "f32",
    "NUM_STREAMS": "1",
    "PERFORMANCE_HINT": "LATENCY",
}


def main():
    model, inputs, threads, warmup, iters = sys.argv[1:6]
    core = ov.Core()
    config = dict(CONFIG, INFERENCE_NUM_THREADS=int(threads))
    if len(sys.argv) > 6 and sys.argv[6] == "bf16":
        config["INFERENCE_PRECISION_HINT"] = "bf16"
    t0 = time.perf_counter()
    compiled = core.compile_model(model, "CPU", config)
    compile_s = time.perf_counter() - t0
    request = compiled.create_infer_request()
    feed = [np.load(p) for p in inputs.split(",")]
    for _ in range(int(warmup)):
        request.infer(feed)
    times = []
    for _ in range(int(iters)):
        t0 = time.perf_counter()
        request.infer(feed)
        times.append((time.perf_counter() - t0) * 1e3)
    seen = {}
    for k in list(CONFIG) + ["INFERENCE_NUM_THREADS"]:
        v = compiled.get_property(k)
        seen[k] = v.get_type_name() if isinstance(v, ov.Type) else str(v)
    print(json.dumps({"ms": times, "openvino": ov.get_version(),
                      "compile_s": compile_s, "config": seen}))


if __name__ == "__main__":
    main()
