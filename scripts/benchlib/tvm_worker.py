#!/usr/bin/env python3
"""TVM side of scripts/bench: compile an ONNX model once, or time it.

    tvm_worker.py compile MODEL.onnx LIB.so TARGET
    tvm_worker.py time LIB.so INPUTS THREADS WARMUP ITERS

INPUTS: comma-separated .npy files, one per graph input in graph order.
Uses Apache TVM's Relax ONNX frontend and its default build pipeline for
the llvm target, without any tuning. Prints one JSON line.
"""
import json
import os
import sys
import time


def compile_model(model_path, lib_path, target):
    import onnx
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    t0 = time.perf_counter()
    mod = from_onnx(onnx.load(model_path), keep_params_in_input=False)
    mod = relax.transform.DecomposeOpsForInference()(mod)
    tgt = tvm.target.Target(json.loads(target) if target.startswith("{") else
                            {"kind": "llvm", "mcpu": target})
    # relax.build applies the target's default pipeline (legalization and
    # the generic CPU schedules); no tuning.
    ex = relax.build(mod, target=tgt)
    ex.export_library(lib_path)
    print(json.dumps({"compile_s": time.perf_counter() - t0,
                      "tvm": tvm.__version__}))


def time_model(lib_path, inputs, threads, warmup, iters):
    os.environ["TVM_NUM_THREADS"] = str(threads)
    import numpy as np
    import tvm
    from tvm import relax

    dev = tvm.cpu()
    vm = relax.VirtualMachine(tvm.runtime.load_module(lib_path), dev)
    wrap = tvm.runtime.tensor if hasattr(tvm.runtime, "tensor") \
        else tvm.nd.array
    args = [wrap(np.load(p), dev) for p in inputs.split(",")]
    for _ in range(warmup):
        vm["main"](*args)
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        vm["main"](*args)
        times.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"ms": times}))


if __name__ == "__main__":
    if sys.argv[1] == "compile":
        compile_model(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        time_model(sys.argv[2], sys.argv[3], int(sys.argv[4]),
                   int(sys.argv[5]), int(sys.argv[6]))
