#!/usr/bin/env python3
"""models/digits in -precision=bf16 against fp32 on its whole test set.

    digits_accuracy.py IMAGE_CLASSIFIER OUT

The test set is the one models/digits/train.py holds out (scikit-learn's
8x8 digits, train_test_split with its seed and size, stratified), written
as PNGs the way train.py maps pixels (round(p / 16 * 255)). image-classifier
classifies them in fp32 and in bf16 (two processes); the bf16 accuracy must
be within 0.3 points of the fp32 one (docs/Precision.md), and its logits
must differ from fp32's (else the flag changed nothing). Exit 0 pass, 1
fail, 77 skip (scikit-learn or Pillow absent).
"""
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "..", "models", "digits", "digits.onnx")
SEED, TEST_SIZE = 0, 0.2  # models/digits/train.py
SKIP = 77

sys.path.insert(0, HERE)
from fashion_accuracy import parse_ember  # noqa: E402


def prepare(out):
    from PIL import Image
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    digits = load_digits()
    u8 = np.floor(digits.images.astype(np.float64) / 16.0 * 255.0 +
                  0.5).astype(np.uint8)
    y = digits.target.astype(np.int64)
    _, test = train_test_split(np.arange(len(y)), test_size=TEST_SIZE,
                               random_state=SEED, stratify=y)
    os.makedirs(os.path.join(out, "images"), exist_ok=True)
    paths = []
    for i in test:
        p = os.path.join(out, "images", f"{i:04d}.png")
        Image.fromarray(u8[i], mode="L").save(p)
        paths.append(p)
    with open(os.path.join(out, "list.txt"), "w") as f:
        f.write("".join(p + "\n" for p in paths))
    return paths, y[test]


def classify(classifier, out, paths, flags, name):
    path = os.path.join(out, name)
    with open(path, "w") as f:
        subprocess.run([classifier, f"-model={MODEL}", "-image-mode=0to1",
                        "-topk=1",
                        f"-input-image-list-file={os.path.join(out, 'list.txt')}"]
                       + flags, stdout=f, check=True)
    result = parse_ember(path)
    missing = [p for p in paths if p not in result]
    if missing:
        raise RuntimeError(f"no result for {len(missing)} images ({name})")
    return (np.array([result[p][0] for p in paths]),
            np.array([result[p][1] for p in paths]))


def main():
    try:
        import PIL  # noqa: F401
        import sklearn  # noqa: F401
    except ImportError as e:
        print(f"SKIP: {e} (run scripts/setup.sh)")
        return SKIP
    classifier, out = sys.argv[1], sys.argv[2]
    paths, truth = prepare(out)
    top32, score32 = classify(classifier, out, paths, [], "fp32.txt")
    top16, score16 = classify(classifier, out, paths, ["-precision=bf16"],
                              "bf16.txt")
    acc32 = float((top32 == truth).mean())
    acc16 = float((top16 == truth).mean())
    diff = float(np.abs(score32 - score16).max())
    print(f"images: {len(paths)}")
    print(f"accuracy: fp32 {acc32 * 100:.2f}%, bf16 {acc16 * 100:.2f}%")
    print(f"top-1 agreement: {(top32 == top16).mean() * 100:.2f}%")
    print(f"max |top-1 logit difference|: {diff:.3g}")
    ok = abs(acc32 - acc16) <= 0.003 + 1e-9
    if not ok:
        print("FAIL: bf16 accuracy differs from fp32 by more than 0.3 points")
    if diff == 0:
        print("FAIL: logits equal fp32's; -precision=bf16 had no effect")
        ok = False
    print("PASS" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
