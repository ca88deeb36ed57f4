#!/usr/bin/env python3
"""onnxruntime side of scripts/bench: time one model.

    ort_worker.py MODEL.onnx INPUTS THREADS WARMUP ITERS

INPUTS: comma-separated .npy files, one per graph input in graph order.
CPU execution provider, intra_op_num_threads=THREADS, sequential execution,
all graph optimizations. Prints one JSON line {"ms": [...], "ort": version}.
"""
import json
import sys
import time

import numpy as np
import onnxruntime as ort

model, inputs, threads, warmup, iters = sys.argv[1:6]
so = ort.SessionOptions()
so.intra_op_num_threads = int(threads)
so.inter_op_num_threads = 1
so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
feed = {i.name: np.load(p)
        for i, p in zip(sess.get_inputs(), inputs.split(","))}
for _ in range(int(warmup)):
    sess.run(None, feed)
times = []
for _ in range(int(iters)):
    t0 = time.perf_counter()
    sess.run(None, feed)
    times.append((time.perf_counter() - t0) * 1e3)
print(json.dumps({"ms": times, "ort": ort.__version__}))
