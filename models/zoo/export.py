#!/usr/bin/env python3
"""Exports the torchvision zoo used by Ember's tests and benchmarks to ONNX.

Run with Debian's Python (it has torch and torchvision):
    /usr/bin/python3 models/zoo/export.py OUTDIR [--models resnet18,mobilenet_v2]

For each model NAME it writes OUTDIR/NAME.onnx (opset 13, batch 1, input
"input", output "output", BatchNormalization kept as separate nodes) and
OUTDIR/NAME.input.pb (a fixed random input as an ONNX TensorProto).

Weights are random (nothing is downloaded) but usable: every model is built
with a fixed seed, then a few random batches run in train mode so that the
BatchNorm running statistics match the activations. Without that, several of
these networks collapse to outputs near zero. The script checks that each
model's eval-mode outputs have a standard deviation of order one.
"""
import argparse
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torchvision.models as tvm

MODELS = {
    "resnet18": (lambda: tvm.resnet18(), 224),
    "resnet50": (lambda: tvm.resnet50(), 224),
    "mobilenet_v2": (lambda: tvm.mobilenet_v2(), 224),
    "squeezenet1_1": (lambda: tvm.squeezenet1_1(), 224),
    "densenet121": (lambda: tvm.densenet121(), 224),
    "shufflenet_v2_x1_0": (lambda: tvm.shufflenet_v2_x1_0(), 224),
    "efficientnet_b0": (lambda: tvm.efficientnet_b0(), 224),
    "googlenet": (lambda: tvm.googlenet(aux_logits=False, init_weights=True),
                  224),
    "inception_v3": (lambda: tvm.inception_v3(aux_logits=False,
                                              init_weights=True), 299),
}


def calibrate(model, size, batches=4, batch=8):
    """Runs random batches in train mode to set BatchNorm running stats."""
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the batches
    model.train()
    with torch.no_grad():
        for _ in range(batches):
            model(torch.randn(batch, 3, size, size))
    model.eval()


def export(name, out_dir):
    make, size = MODELS[name]
    torch.manual_seed(0)
    np.random.seed(0)
    model = make()
    calibrate(model, size)
    x = torch.randn(1, 3, size, size)
    with torch.no_grad():
        y = model(x)
    std = float(y.std())
    if not 0.05 < std < 100:
        sys.exit("%s: output std %.4g is not O(1); calibration failed" %
                 (name, std))
    path = os.path.join(out_dir, name + ".onnx")
    # PRESERVE with the model in eval mode keeps BatchNormalization nodes
    # (EVAL would fold them into the convolutions during export).
    torch.onnx.export(model, x, path, opset_version=13,
                      input_names=["input"], output_names=["output"],
                      training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=True)
    t = onnx.numpy_helper.from_array(x.numpy(), "input")
    with open(os.path.join(out_dir, name + ".input.pb"), "wb") as f:
        f.write(t.SerializeToString())
    print("%s: %s (output std %.3f)" % (name, path, std))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--models", default=",".join(MODELS),
                   help="comma-separated subset of: " + ", ".join(MODELS))
    args = p.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in args.models.split(","):
        if name not in MODELS:
            sys.exit("unknown model '%s' (known: %s)" % (name, ", ".join(MODELS)))
        export(name, args.out_dir)


if __name__ == "__main__":
    main()
