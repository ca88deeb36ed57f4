#!/usr/bin/env python3
"""Accuracy of Ember's own profile-guided int8 quantization (ctest
accuracy.quantized-fashion, accuracy.quantized-digits).

    quantized_accuracy.py MODEL CLASSIFIER OUT [extra image-classifier flags]

MODEL is fashion (Fashion-MNIST, the whole 10000-image test set) or digits
(scikit-learn's digits, the 360-image test split of models/digits/train.py).
Steps, all with image-classifier on PNGs (image-mode 0to1):
  1. the fp32 model on the CPU over the test set: fp32 accuracy;
  2. -dump-profile over the first 500 training images (Interpreter);
  3. -load-profile (plus the extra flags) over the test set on the CPU and
     on the Interpreter.
Pass: int8 accuracy within 1.0 point of fp32 on both backends, the CPU's
printed top-1 scores equal to the Interpreter's (integer kernels, same
float requantize), and some score different from fp32's (the profile was
applied). Exit 77 (skip) without the dataset or the venv's packages.
"""
import gzip
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "..", "models")
FASHION = "/usr/share/datasets/fashion-mnist"
SKIP = 77
PROFILE_IMAGES = 500


def read_idx(name):
    with gzip.open(os.path.join(FASHION, name), "rb") as f:
        raw = f.read()
    rank = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * rank).reshape(dims)


def fashion_data():
    """(train images, test images, test labels) as uint8 arrays."""
    if not os.path.isdir(FASHION):
        return None
    return (read_idx("train-images-idx3-ubyte.gz")[:PROFILE_IMAGES],
            read_idx("t10k-images-idx3-ubyte.gz"),
            read_idx("t10k-labels-idx1-ubyte.gz").astype(np.int64))


def digits_data():
    """The split of models/digits/train.py, pixels as its to_uint8."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    d = load_digits()
    u8 = np.floor(d.images.astype(np.float64) / 16.0 * 255.0 + 0.5)
    u8 = u8.astype(np.uint8)
    y = d.target.astype(np.int64)
    idx_train, idx_test = train_test_split(np.arange(len(y)), test_size=0.2,
                                           random_state=0, stratify=y)
    return u8[idx_train[:PROFILE_IMAGES]], u8[idx_test], y[idx_test]


def write_pngs(out, name, images):
    from PIL import Image
    os.makedirs(os.path.join(out, name), exist_ok=True)
    paths = []
    for i, img in enumerate(images):
        p = os.path.join(out, name, f"{i:05d}.png")
        if not os.path.exists(p):
            Image.fromarray(img, mode="L").save(p)
        paths.append(p)
    lst = os.path.join(out, name + ".txt")
    with open(lst, "w") as f:
        f.write("".join(p + "\n" for p in paths))
    return lst, paths


def classify(cmd, paths, what):
    start = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    print(f"{what}: {time.time() - start:.1f} s")
    if r.returncode != 0:
        print(f"FAIL: {what}: exit {r.returncode}: {r.stderr.strip()}")
        sys.exit(1)
    result, current = {}, None
    for line in r.stdout.splitlines():
        if line.startswith("  1: "):
            fields = line.split()
            result[current] = (int(fields[1]), fields[-1])
        elif not line.startswith(" ") and not line.startswith(
                ("summary:", "mismatches:")):
            current = line.strip()
    missing = [p for p in paths if p not in result]
    if missing:
        print(f"FAIL: {what}: no result for {len(missing)} images")
        sys.exit(1)
    return [result[p] for p in paths]


def main():
    model, classifier, out = sys.argv[1:4]
    extra = sys.argv[4:]
    try:
        import PIL  # noqa: F401
        data = fashion_data() if model == "fashion" else digits_data()
    except ImportError as e:
        print(f"SKIP: {e} (run scripts/setup.sh)")
        return SKIP
    if data is None:
        print(f"SKIP: {FASHION} missing")
        return SKIP
    train, test, truth = data
    os.makedirs(out, exist_ok=True)
    train_list, train_paths = write_pngs(out, "train", train)
    test_list, test_paths = write_pngs(out, "test", test)
    onnx = os.path.join(MODELS, model, model + ".onnx")
    base = [classifier, f"-model={onnx}", "-image-mode=0to1", "-topk=1"]
    if model == "fashion":
        base.append("-minibatch=100")
    profile = os.path.join(out, "profile.yaml")
    fp32 = classify(base + ["-backend=CPU", f"-input-image-list-file={test_list}"],
                    test_paths, "fp32, CPU")
    classify(base + ["-backend=Interpreter", f"-dump-profile={profile}",
                     f"-input-image-list-file={train_list}"],
             train_paths, f"profile of {len(train_paths)} training images")
    quant = [f"-load-profile={profile}", f"-input-image-list-file={test_list}"]
    int8 = {b: classify(base + [f"-backend={b}"] + quant + extra, test_paths,
                        f"int8, {b}")
            for b in ("CPU", "Interpreter")}
    acc = lambda r: float(np.mean(np.array([c for c, _ in r]) == truth))
    a32 = acc(fp32)
    ok = True
    print(f"test images: {len(test_paths)}; fp32 accuracy {a32 * 100:.2f}%")
    for b, r in int8.items():
        a8 = acc(r)
        print(f"int8 accuracy ({b}): {a8 * 100:.2f}% "
              f"({(a8 - a32) * 100:+.2f} points)")
        if abs(a8 - a32) > 0.01 + 1e-9:
            print(f"FAIL: {b}: int8 accuracy is more than 1.0 point from fp32")
            ok = False
    if int8["CPU"] != int8["Interpreter"]:
        n = sum(a != b for a, b in zip(int8["CPU"], int8["Interpreter"]))
        print(f"FAIL: CPU and Interpreter differ on {n} images")
        ok = False
    if all(a == b for a, b in zip(int8["CPU"], fp32)):
        print("FAIL: int8 scores equal fp32's: the profile had no effect")
        ok = False
    print("PASS" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
