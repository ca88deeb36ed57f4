#!/usr/bin/env python3
"""Train a small CNN on sklearn's 8x8 digits dataset and export it to ONNX.

Run with Debian's system Python (torch 1.13 CPU, sklearn, Pillow, onnx):

    /usr/bin/python3 models/digits/train.py

Writes, next to this script:
    digits.onnx                      the model (opset 13, input "input" [1,1,8,8], output "logits" [1,10])
    labels.txt                       class names, one per line (0..9)
    images/digit-<label>.png         10 held-out test images, 8x8 grayscale
    test_data/digit-<label>.input.pb matching input tensors (ONNX TensorProto, float32 [1,1,8,8])

Reference outputs (test_data/*.output.pb) are made afterwards by make_reference.py.
"""
import os
import random

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import numpy_helper
from PIL import Image
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

SEED = 0
EPOCHS = 40
BATCH_SIZE = 32
LR = 1e-3
TEST_SIZE = 0.2
HERE = os.path.dirname(os.path.abspath(__file__))
ALLOWED_OPS = {"Conv", "BatchNormalization", "Relu", "MaxPool", "Flatten", "Reshape",
               "Gemm", "MatMul", "Add", "Identity", "Constant"}


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)


def to_uint8(pixels):
    """sklearn digits pixels are integers 0..16; map to 0..255 grayscale.

    round(p/16*255), rounding half up. The only exact .5 case is p=8 (127.5 -> 128),
    where round-half-up and round-half-even agree.
    """
    return np.floor(pixels.astype(np.float64) / 16.0 * 255.0 + 0.5).astype(np.uint8)


def to_input(u8):
    """uint8 grayscale -> float32 model input, exactly what a 0..255 PNG gives after /255."""
    return u8.astype(np.float32) / np.float32(255.0)


class DigitsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, kernel_size=3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.MaxPool2d(2),            # 8x8 -> 4x4
            nn.Conv2d(16, 32, kernel_size=3, padding=1),
            nn.BatchNorm2d(32),
            nn.ReLU(),
            nn.MaxPool2d(2),            # 4x4 -> 2x2
        )
        self.classifier = nn.Linear(32 * 2 * 2, 10)

    def forward(self, x):
        x = self.features(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


def main():
    seed_everything(SEED)

    digits = load_digits()
    u8 = to_uint8(digits.images)                      # [N,8,8] uint8
    x = to_input(u8)[:, None, :, :]                   # [N,1,8,8] float32 in [0,1]
    y = digits.target.astype(np.int64)
    idx = np.arange(len(y))
    idx_train, idx_test = train_test_split(idx, test_size=TEST_SIZE, random_state=SEED, stratify=y)
    print(f"dataset: {len(y)} samples, train {len(idx_train)}, test {len(idx_test)}")

    x_train, y_train = torch.from_numpy(x[idx_train]), torch.from_numpy(y[idx_train])
    x_test, y_test = torch.from_numpy(x[idx_test]), torch.from_numpy(y[idx_test])

    model = DigitsNet()
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator().manual_seed(SEED)

    def evaluate():
        model.eval()
        with torch.no_grad():
            pred = model(x_test).argmax(1)
        return (pred == y_test).float().mean().item(), pred

    for epoch in range(1, EPOCHS + 1):
        model.train()
        perm = torch.randperm(len(x_train), generator=gen)
        total = 0.0
        for i in range(0, len(perm), BATCH_SIZE):
            b = perm[i:i + BATCH_SIZE]
            opt.zero_grad()
            loss = loss_fn(model(x_train[b]), y_train[b])
            loss.backward()
            opt.step()
            total += loss.item() * len(b)
        if epoch % 5 == 0 or epoch == EPOCHS:
            acc, _ = evaluate()
            print(f"epoch {epoch:3d}  train loss {total / len(perm):.4f}  test acc {acc:.4f}")

    acc, pred = evaluate()
    n_right = int((pred == y_test).sum())
    print(f"final test accuracy: {acc * 100:.2f}% ({n_right}/{len(y_test)})")

    # ---- ONNX export -------------------------------------------------------
    # TrainingMode.EVAL (the default) runs the exporter's eval peephole pass, which folds
    # BatchNorm into the preceding Conv. With the model already in eval() mode,
    # TrainingMode.PRESERVE exports inference semantics but skips that pass, so each
    # BatchNorm stays a separate BatchNormalization node (running statistics as initializers).
    model.eval()
    onnx_path = os.path.join(HERE, "digits.onnx")
    torch.onnx.export(
        model, torch.zeros(1, 1, 8, 8), onnx_path,
        input_names=["input"], output_names=["logits"],
        opset_version=13, do_constant_folding=False,
        training=torch.onnx.TrainingMode.PRESERVE,
        export_params=True,
    )
    m = onnx.load(onnx_path)
    onnx.checker.check_model(m)
    ops = [n.op_type for n in m.graph.node]
    print("onnx ops:", ops)
    print("onnx op types:", sorted(set(ops)))
    bad = set(ops) - ALLOWED_OPS
    assert not bad, f"unexpected ONNX ops: {bad}"
    print(f"digits.onnx: {os.path.getsize(onnx_path)} bytes")

    # ---- test images: first test sample of each class ----------------------
    with open(os.path.join(HERE, "labels.txt"), "w") as f:
        f.write("".join(f"{c}\n" for c in range(10)))
    os.makedirs(os.path.join(HERE, "images"), exist_ok=True)
    os.makedirs(os.path.join(HERE, "test_data"), exist_ok=True)
    for label in range(10):
        j = int(np.nonzero(y_test.numpy() == label)[0][0])   # position in test split
        k = int(idx_test[j])                                  # index in load_digits()
        img = u8[k]
        Image.fromarray(img, mode="L").save(os.path.join(HERE, "images", f"digit-{label}.png"))
        # The tensor is re-derived from the PNG to guarantee they match bit for bit.
        back = np.asarray(Image.open(os.path.join(HERE, "images", f"digit-{label}.png")))
        assert back.dtype == np.uint8 and back.shape == (8, 8) and np.array_equal(back, img)
        t = to_input(back)[None, None, :, :]
        assert np.array_equal(t, x[k:k + 1])
        tp = numpy_helper.from_array(t, name="input")
        with open(os.path.join(HERE, "test_data", f"digit-{label}.input.pb"), "wb") as f:
            f.write(tp.SerializeToString())
        with torch.no_grad():
            logits = model(torch.from_numpy(t))[0]
        p = int(logits.argmax())
        print(f"digit-{label}: load_digits index {k}, test position {j}, torch predicts {p}"
              f" {'OK' if p == label else 'WRONG'}")


if __name__ == "__main__":
    main()
