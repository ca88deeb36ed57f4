#!/usr/bin/env python3
"""PyTorch side of scripts/bench (Debian's torch, /usr/bin/python3).

    torch_worker.py freeze NAME OUT.pt      build the zoo model exactly as
                                            models/zoo/export.py does and
                                            save it TorchScript-frozen
    torch_worker.py time OUT.pt INPUT.npy THREADS WARMUP ITERS

The weights equal the exported ONNX file's: same constructor, seed and
BatchNorm calibration. Prints one JSON line.
"""
import json
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "models", "zoo"))


def freeze(name, out):
    import export  # models/zoo/export.py

    make, size = export.MODELS[name]
    torch.manual_seed(0)
    np.random.seed(0)
    model = make()
    export.calibrate(model, size)
    x = torch.randn(1, 3, size, size)
    with torch.no_grad():
        traced = torch.jit.trace(model, x)
        frozen = torch.jit.freeze(traced)
    frozen.save(out)
    print(json.dumps({"torch": torch.__version__}))


def time_model(path, inp, threads, warmup, iters):
    torch.set_num_threads(threads)
    model = torch.jit.load(path)
    x = torch.from_numpy(np.load(inp))
    with torch.no_grad():
        for _ in range(warmup):
            model(x)
        times = []
        for _ in range(iters):
            t0 = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"ms": times, "torch": torch.__version__}))


if __name__ == "__main__":
    if sys.argv[1] == "freeze":
        freeze(sys.argv[2], sys.argv[3])
    else:
        time_model(sys.argv[2], sys.argv[3], int(sys.argv[4]),
                   int(sys.argv[5]), int(sys.argv[6]))
