#!/usr/bin/env python3
"""Deterministic test inputs for scripts/gpu-test.sh, made the same way on
the build machine and on the GPU machine (integer hashing only, so any
numpy gives the same bits), so large inputs need not be shipped.

    gpu_inputs.py write SPEC OUT.bin   # SPEC: "float32 1,3,224,224 seed"
"""
import sys

import numpy as np


def make(spec):
    """The input described by spec ("KIND D0,D1,... SEED")."""
    kind, dims, seed = spec.split()
    shape = [int(d) for d in dims.split(",")] if dims != "-" else []
    n = int(np.prod(shape)) if shape else 1
    i = np.arange(n, dtype=np.uint64) + np.uint64(int(seed) * 0x9E3779B9)
    h = (i * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)
    h ^= h >> np.uint64(15)
    h = (h * np.uint64(0x2C1B3C6D)) & np.uint64(0xFFFFFFFF)
    h ^= h >> np.uint64(12)
    u = (h >> np.uint64(8)).astype(np.float64) / float(1 << 24)  # [0, 1)
    x = (u * 2.0 - 1.0).reshape(shape)
    return x.astype({"float32": np.float32, "int32": np.int32,
                     "int64": np.int64, "bool": np.bool_}[kind])


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "write":
        sys.exit(__doc__)
    make(sys.argv[2]).tofile(sys.argv[3])
