#!/usr/bin/env python3
"""Exports Ember's transformer models (benchmark and test sizes) to ONNX.

Run with Debian's Python (it has torch and torchvision):
    /usr/bin/python3 models/transformers/export.py OUTDIR [--models bert_mini]

For each model NAME it writes OUTDIR/NAME.onnx (opset 17, batch 1, fixed
shapes, output "output") and OUTDIR/NAME.input_K.pb for each graph input K
(a fixed random input as an ONNX TensorProto named after the graph input).
Weights are random and seeded; nothing is downloaded. The *_mini models are
the same code at reduced size for ctest; models/transformers/README.md
describes every model.
"""
import argparse
import collections
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torchvision.models as tvm
from torchvision.models.swin_transformer import SwinTransformer
from torchvision.models.vision_transformer import VisionTransformer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nets import (BertEncoder, GptDecoder, LlamaDecoder, T5Encoder,  # noqa: E402
                  WhisperEncoder)

OPSET = 17
# Fraction of the BERT-style inputs' tokens that are real (the rest padding).
KEEP_FRACTION = 0.75


class Spec(collections.namedtuple("Spec", "make kind size vocab")):
    """make() builds the module; kind is 'image' (input [1, 3, size, size]),
    'bert' (input_ids and attention_mask [1, size]), 'gpt' (input_ids
    [1, size]) or 'audio' (mel [1, 80, size]); vocab bounds the random
    token ids."""


def vit_mini():
    return VisionTransformer(image_size=32, patch_size=8, num_layers=2,
                             num_heads=4, hidden_dim=128, mlp_dim=256,
                             num_classes=10)


def swin_mini():
    return SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2],
                           num_heads=[2, 4], window_size=[4, 4],
                           stochastic_depth_prob=0.0, num_classes=10)


MODELS = {
    # The benchmark set (scripts/bench --set transformers).
    "vit_b_16": Spec(lambda: tvm.vit_b_16(weights=None), "image", 224, 0),
    "swin_t": Spec(lambda: tvm.swin_t(weights=None), "image", 224, 0),
    "bert_base": Spec(lambda: BertEncoder(30522, 512, 768, 12, 3072, 12),
                      "bert", 128, 30522),
    "gpt2_small": Spec(lambda: GptDecoder(50257, 1024, 768, 12, 3072, 12),
                       "gpt", 256, 50257),
    # The same code at test size (tests/transformers).
    "vit_mini": Spec(vit_mini, "image", 32, 0),
    "swin_mini": Spec(swin_mini, "image", 64, 0),
    "bert_mini": Spec(lambda: BertEncoder(1000, 64, 128, 4, 512, 2),
                      "bert", 32, 1000),
    "gpt_mini": Spec(lambda: GptDecoder(1000, 64, 128, 4, 512, 2),
                     "gpt", 32, 1000),
    # Held-out architectures at test size only: rotary embeddings, grouped
    # K/V heads, RMS norms, SwiGLU, a tied head (LLaMA); relative-position
    # bias without score scaling (T5); a convolutional audio stem (Whisper).
    "llama_mini": Spec(lambda: LlamaDecoder(512, 128, 4, 2, 352, 2),
                       "gpt", 37, 512),
    "t5_mini": Spec(lambda: T5Encoder(512, 128, 4, 256, 2), "bert", 37, 512),
    "whisper_mini": Spec(lambda: WhisperEncoder(80, 400, 128, 4, 2), "audio",
                         400, 0),
}


def build(name):
    """The module in eval mode with its seeded random weights."""
    spec = MODELS[name]
    torch.manual_seed(0)
    model = spec.make()
    head = None
    if isinstance(model, VisionTransformer):
        head = model.heads.head
    elif isinstance(model, SwinTransformer):
        head = model.head
    if head is not None:
        # torchvision starts the classifier at zero (ViT) or near zero
        # (Swin, std 0.02) for fine-tuning: logits of order one instead
        # make the relative error bound of the tests meaningful.
        torch.nn.init.normal_(head.weight, std=head.in_features ** -0.5)
    return model.eval()


def make_inputs(name):
    """(input names, tensors) of the fixed random input, seeded."""
    spec = MODELS[name]
    gen = torch.Generator().manual_seed(1)
    if spec.kind == "image":
        return ["input"], [torch.randn(1, 3, spec.size, spec.size,
                                       generator=gen)]
    if spec.kind == "audio":
        return ["mel"], [torch.randn(1, 80, spec.size, generator=gen)]
    ids = torch.randint(0, spec.vocab, (1, spec.size), generator=gen)
    if spec.kind == "gpt":
        return ["input_ids"], [ids]
    mask = torch.zeros(1, spec.size, dtype=torch.int64)
    mask[:, :int(spec.size * KEEP_FRACTION)] = 1
    return ["input_ids", "attention_mask"], [ids, mask]


def op_counts(path):
    ops = collections.Counter(n.op_type for n in onnx.load(path).graph.node)
    return ", ".join("%s %d" % kv for kv in sorted(ops.items()))


def export(name, out_dir):
    model = build(name)
    names, inputs = make_inputs(name)
    with torch.no_grad():
        y = model(*inputs)
    std = float(y.std())
    if not 0.05 < std < 100:
        sys.exit("%s: output std %.4g is not O(1)" % (name, std))
    path = os.path.join(out_dir, name + ".onnx")
    torch.onnx.export(model, tuple(inputs), path, opset_version=OPSET,
                      input_names=names, output_names=["output"],
                      do_constant_folding=True)
    for k, (n, x) in enumerate(zip(names, inputs)):
        t = onnx.numpy_helper.from_array(x.numpy(), n)
        with open(os.path.join(out_dir, "%s.input_%d.pb" % (name, k)),
                  "wb") as f:
            f.write(t.SerializeToString())
    print("%s: %s, output %s std %.3f; ops: %s" %
          (name, path, list(y.shape), std, op_counts(path)))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--models", default=",".join(MODELS),
                   help="comma-separated subset of: " + ", ".join(MODELS))
    args = p.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    np.random.seed(0)
    for name in args.models.split(","):
        if name not in MODELS:
            sys.exit("unknown model '%s' (known: %s)" %
                     (name, ", ".join(MODELS)))
        export(name, args.out_dir)


if __name__ == "__main__":
    main()
