#!/usr/bin/env python3
"""PyTorch side of scripts/bench (Debian's torch, /usr/bin/python3).

    torch_worker.py freeze SET NAME OUT.pt  build the model exactly as
                                            models/SET/export.py does (SET:
                                            zoo or transformers) and save
                                            it TorchScript-frozen
    torch_worker.py time OUT.pt INPUTS THREADS WARMUP ITERS

INPUTS: comma-separated .npy files, one per model input in order. The
weights equal the exported ONNX file's: same constructor, seed and (zoo)
BatchNorm calibration. Prints one JSON line.
"""
import json
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "..", "models")


def zoo_model(name):
    sys.path.insert(0, os.path.join(MODELS, "zoo"))
    import export  # models/zoo/export.py

    make, size = export.MODELS[name]
    torch.manual_seed(0)
    np.random.seed(0)
    model = make()
    export.calibrate(model, size)
    return model, (torch.randn(1, 3, size, size),)


def transformer_model(name):
    sys.path.insert(0, os.path.join(MODELS, "transformers"))
    import export  # models/transformers/export.py

    return export.build(name), tuple(export.make_inputs(name)[1])


def freeze(model_set, name, out):
    make = {"zoo": zoo_model, "transformers": transformer_model}[model_set]
    model, xs = make(name)
    with torch.no_grad():
        traced = torch.jit.trace(model, xs)
        frozen = torch.jit.freeze(traced)
    frozen.save(out)
    print(json.dumps({"torch": torch.__version__}))


def time_model(path, inputs, threads, warmup, iters):
    torch.set_num_threads(threads)
    model = torch.jit.load(path)
    xs = [torch.from_numpy(np.load(p)) for p in inputs.split(",")]
    with torch.no_grad():
        for _ in range(warmup):
            model(*xs)
        times = []
        for _ in range(iters):
            t0 = time.perf_counter()
            model(*xs)
            times.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"ms": times, "torch": torch.__version__}))


if __name__ == "__main__":
    if sys.argv[1] == "freeze":
        freeze(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        time_model(sys.argv[2], sys.argv[3], int(sys.argv[4]),
                   int(sys.argv[5]), int(sys.argv[6]))
