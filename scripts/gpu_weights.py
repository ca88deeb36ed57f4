#!/usr/bin/env python3
"""gpu-test.sh, latency package: makes CASE/weights.bin on the GPU machine
instead of carrying it (resnet50 or a BERT-base encoder alone would not fit
the package). CASE/weights.map lists the constant image's size, its float32
ranges (filled with seeded values, uniform in [-0.05, 0.05): latency does
not depend on them) and its other ranges, whose bytes (shapes, indices)
travel in CASE/weights.keep in that order.

    gpu_weights.py CASE        # writes CASE/weights.bin
    gpu_weights.py map IR.txt OUT.map CONSTANTS.bin OUT.keep
                               # prepare: from model-compiler -dump-ir
"""
import json
import os
import re
import sys

import numpy as np

SEED = 20261205


def make(case):
    m = json.load(open(os.path.join(case, "weights.map")))
    image = np.zeros(m["size"], dtype=np.uint8)
    rng = np.random.default_rng(SEED)
    for off, size in m["float"]:
        vals = rng.uniform(-0.05, 0.05, size // 4).astype(np.float32)
        image[off:off + size] = vals.view(np.uint8)
    keep = np.fromfile(os.path.join(case, "weights.keep"), dtype=np.uint8)
    at = 0
    for off, size in m["keep"]:
        image[off:off + size] = keep[at:at + size]
        at += size
    image.tofile(os.path.join(case, "weights.bin"))


LINE = re.compile(r"= weight (\w+)<[^>]*> const // @constant\+(\d+) size (\d+)")


def write_map(ir, out_map, constants, out_keep):
    """The map and the kept bytes of constant image constants."""
    image = np.fromfile(constants, dtype=np.uint8)
    floats, keep, blobs = [], [], []
    for kind, off, size in LINE.findall(open(ir).read()):
        off, size = int(off), int(size)
        if kind == "float":
            floats.append([off, size - size % 4])
        else:
            keep.append([off, size])
            blobs.append(image[off:off + size])
    json.dump({"size": int(image.size), "float": floats, "keep": keep},
              open(out_map, "w"))
    (np.concatenate(blobs) if blobs else np.zeros(0, np.uint8)).tofile(
        out_keep)


if __name__ == "__main__":
    if len(sys.argv) == 2:
        make(sys.argv[1])
    elif len(sys.argv) == 6 and sys.argv[1] == "map":
        write_map(*sys.argv[2:])
    else:
        sys.exit(__doc__)
