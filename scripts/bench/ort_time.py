#!/usr/bin/env python3
"""ort_time.py MODEL.onnx ITERATIONS THREADS: median onnxruntime latency
(ms) of one run on a random input, after one warm-up, all graph
optimizations on."""
import sys
import time

import numpy as np
import onnxruntime as ort

so = ort.SessionOptions()
so.intra_op_num_threads = int(sys.argv[3])
so.inter_op_num_threads = 1
s = ort.InferenceSession(sys.argv[1], so, providers=["CPUExecutionProvider"])
feeds = {}
for i in s.get_inputs():
    feeds[i.name] = np.random.rand(*i.shape).astype(np.float32)
s.run(None, feeds)
times = []
for _ in range(int(sys.argv[2])):
    a = time.perf_counter()
    s.run(None, feeds)
    times.append((time.perf_counter() - a) * 1e3)
print("median ms: %.3f" % sorted(times)[len(times) // 2])
