#!/usr/bin/env python3
"""Train a small CNN on Fashion-MNIST and export it to ONNX.

Run with Debian's system Python (python3-torch, python3-pil, python3-onnx) and
the Debian package dataset-fashion-mnist (IDX files under
/usr/share/datasets/fashion-mnist):

    /usr/bin/python3 models/fashion/train.py

Writes, next to this script:
    fashion.onnx                 the model (opset 13, input "input" [N,1,28,28]
                                 with a symbolic batch dim "N", output "logits" [N,10])
    labels.txt                   class names, one per line
    images/<c>-<name>-<k>.png    20 test-split images, two per class, 28x28 grayscale
"""
import gzip
import os
import random
import sys
import time

import numpy as np
import onnx
import torch
import torch.nn as nn
from PIL import Image

SEED = 0
EPOCHS = 3
BATCH_SIZE = 128
LR = 2e-3
HERE = os.path.dirname(os.path.abspath(__file__))
DATA_DIR = "/usr/share/datasets/fashion-mnist"
LABELS = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
          "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
ALLOWED_OPS = {"Conv", "BatchNormalization", "Relu", "MaxPool", "Flatten",
               "Gemm", "Identity"}


def read_idx(name):
    """Reads a gzipped IDX file (ubyte) into a numpy array of its dims."""
    with gzip.open(os.path.join(DATA_DIR, name), "rb") as f:
        raw = f.read()
    magic = int.from_bytes(raw[0:4], "big")
    assert magic >> 8 == 0x08, f"{name}: not an unsigned-byte IDX file"
    rank = magic & 0xFF
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    data = np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * rank)
    return data.reshape(dims)


def load_split(prefix):
    images = read_idx(f"{prefix}-images-idx3-ubyte.gz")
    labels = read_idx(f"{prefix}-labels-idx1-ubyte.gz").astype(np.int64)
    return images, labels


def to_input(u8):
    """uint8 [n,28,28] -> float32 [n,1,28,28] in [0,1]: what a PNG gives / 255."""
    return (u8.astype(np.float32) / np.float32(255.0))[:, None, :, :]


class FashionNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.MaxPool2d(2),            # 28x28 -> 14x14
            nn.Conv2d(16, 32, kernel_size=3, padding=1),
            nn.BatchNorm2d(32),
            nn.ReLU(),
            nn.MaxPool2d(2),            # 14x14 -> 7x7
        )
        self.classifier = nn.Sequential(
            nn.Linear(32 * 7 * 7, 64),
            nn.ReLU(),
            nn.Linear(64, 10),
        )

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)


def evaluate(model, x, y):
    model.eval()
    preds = []
    with torch.no_grad():
        for i in range(0, len(x), 1000):
            preds.append(model(x[i:i + 1000]).argmax(1))
    pred = torch.cat(preds)
    return (pred == y).float().mean().item()


def train(model, x, y):
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(SEED)
    for epoch in range(1, EPOCHS + 1):
        model.train()
        start = time.time()
        perm = torch.randperm(len(x), generator=gen)
        total = 0.0
        for i in range(0, len(perm), BATCH_SIZE):
            b = perm[i:i + BATCH_SIZE]
            opt.zero_grad()
            loss = loss_fn(model(x[b]), y[b])
            loss.backward()
            opt.step()
            total += loss.item() * len(b)
            if (i // BATCH_SIZE) % 100 == 99:
                print(f"  {i + len(b)} images  {time.time() - start:.0f} s",
                      flush=True)
        sched.step()
        print(f"epoch {epoch}  train loss {total / len(perm):.4f}  "
              f"{time.time() - start:.0f} s", flush=True)


def export(model, path):
    # TrainingMode.PRESERVE on an eval() model keeps BatchNormalization as its
    # own node (the default EVAL mode folds it into the Conv); see models/digits.
    model.eval()
    torch.onnx.export(
        model, torch.zeros(1, 1, 28, 28), path,
        input_names=["input"], output_names=["logits"],
        dynamic_axes={"input": {0: "N"}, "logits": {0: "N"}},
        opset_version=13, do_constant_folding=False,
        training=torch.onnx.TrainingMode.PRESERVE, export_params=True)
    m = onnx.load(path)
    onnx.checker.check_model(m)
    ops = sorted({n.op_type for n in m.graph.node})
    print("onnx op types:", ops)
    bad = set(ops) - ALLOWED_OPS
    assert not bad, f"unexpected ONNX ops: {bad}"
    size = os.path.getsize(path)
    assert size <= 2 * 1024 * 1024, f"model too large: {size} bytes"
    print(f"fashion.onnx: {size} bytes")


def image_name(label, k):
    slug = LABELS[label].lower().replace("/", "-").replace(" ", "-")
    return f"{label}-{slug}-{k}.png"


def write_images(model, images, labels):
    """Two test-split images per class: the first two of each class."""
    os.makedirs(os.path.join(HERE, "images"), exist_ok=True)
    model.eval()
    right = 0
    for label in range(10):
        for k, j in enumerate(np.nonzero(labels == label)[0][:2]):
            path = os.path.join(HERE, "images", image_name(label, k))
            Image.fromarray(images[j], mode="L").save(path)
            back = np.asarray(Image.open(path))
            assert np.array_equal(back, images[j])
            with torch.no_grad():
                p = int(model(torch.from_numpy(to_input(back[None]))).argmax())
            right += p == label
            print(f"{os.path.basename(path)}: test index {j}, torch predicts "
                  f"{p} ({LABELS[p]}) {'OK' if p == label else 'WRONG'}")
    print(f"torch gets {right}/20 of the shipped images right")


def main():
    if not os.path.isdir(DATA_DIR):
        sys.exit(f"{DATA_DIR} is missing: apt-get install dataset-fashion-mnist")
    seed_everything(SEED)
    train_u8, train_y = load_split("train")
    test_u8, test_y = load_split("t10k")
    print(f"train {train_u8.shape}, test {test_u8.shape}", flush=True)
    x_train = torch.from_numpy(to_input(train_u8))
    y_train = torch.from_numpy(train_y)
    x_test = torch.from_numpy(to_input(test_u8))
    y_test = torch.from_numpy(test_y)

    model = FashionNet()
    train(model, x_train, y_train)
    acc = evaluate(model, x_test, y_test)
    print(f"final test accuracy: {acc * 100:.2f}% "
          f"({round(acc * len(y_test))}/{len(y_test)})")

    export(model, os.path.join(HERE, "fashion.onnx"))
    with open(os.path.join(HERE, "labels.txt"), "w") as f:
        f.write("".join(f"{name}\n" for name in LABELS))
    write_images(model, test_u8, test_y)


if __name__ == "__main__":
    main()
