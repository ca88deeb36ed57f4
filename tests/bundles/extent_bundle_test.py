"""Bundles with an output whose extent depends on the data (ABI version 2 on,
docs/Bundle.md): model-compiler writes a CPU bundle of each model, the C
driver extent_bundle.c reads the extent at NAME_y_EXTENT_OFFSET and the
output up to it (and checks the entries past it are zeros), and that must
equal onnxruntime's output exactly (index copies; float rows are gathered,
not computed). Models: NonZero -> Transpose -> Gather of a table's rows,
NonMaxSuppression -> Gather -> Squeeze -> Gather of the boxes (torchvision's
nms then boxes[keep]), Compress along axis 1 by a computed condition, and
TopK with K fed at run time; each with data of several counts."""
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T, helper as h, numpy_helper as nh

RNG = np.random.default_rng(41)
ELEM = {np.dtype(np.float32): T.FLOAT, np.dtype(np.int64): T.INT64}


def model(nodes, x, consts, yshape):
    """Input x like `x`, float output y of `yshape`: the data-dependent dim
    is a dim_param, as torch.onnx.export writes it."""
    g = h.make_graph(nodes, "g",
                     [h.make_tensor_value_info("x", ELEM[x.dtype], x.shape)],
                     [h.make_tensor_value_info("y", T.FLOAT, yshape)],
                     [nh.from_array(v, n) for n, v in consts.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 13)],
                        ir_version=8)


def nonzero_gather():
    w = RNG.standard_normal((4, 6)).astype(np.float32)
    m = model([h.make_node("NonZero", ["x"], ["i"]),
               h.make_node("Transpose", ["i"], ["t"], perm=[1, 0]),
               h.make_node("Gather", ["w", "t"], ["y"], axis=0)],
              np.zeros((4, 3), np.float32), {"w": w}, ["unk__0", 2, 6])
    datas = []
    for frac in [.5, .1, 1.0]:
        x = RNG.standard_normal((4, 3)).astype(np.float32)
        x[RNG.random((4, 3)) < frac] = 0
        datas.append(x)
    return "nzgather", m, datas


def nms_boxes():
    b = 8
    xy = RNG.random((b, 2)).astype(np.float32) * 4
    boxes = np.concatenate([xy, xy + 1.5], 1).astype(np.float32)
    nodes = [
        h.make_node("Unsqueeze", ["bx", "a0"], ["b3"]),
        h.make_node("Unsqueeze", ["x", "a01"], ["s3"]),
        h.make_node("NonMaxSuppression", ["b3", "s3", "mo", "iou", "st"],
                    ["sel"]),
        h.make_node("Gather", ["sel", "two"], ["k1"], axis=1),
        h.make_node("Squeeze", ["k1", "a1"], ["k"]),
        h.make_node("Gather", ["bx", "k"], ["y"], axis=0)]
    consts = {"bx": boxes, "a0": np.array([0], np.int64),
              "a01": np.array([0, 1], np.int64),
              "mo": np.array([100], np.int64),
              "iou": np.array([0.3], np.float32),
              "st": np.array([0.4], np.float32),
              "two": np.array([2], np.int64), "a1": np.array([1], np.int64)}
    m = model(nodes, np.zeros(b, np.float32), consts, ["unk__0", 4])
    return "nmsboxes", m, [RNG.random(b).astype(np.float32) for _ in range(3)]


def compress_axis1():
    nodes = [h.make_node("Gather", ["x", "zero"], ["r"], axis=0),
             h.make_node("Greater", ["r", "z"], ["c"]),
             h.make_node("Compress", ["x", "c"], ["y"], axis=1)]
    m = model(nodes, np.zeros((3, 6), np.float32),
              {"zero": np.array(0, np.int64), "z": np.array(0, np.float32)},
              [3, "unk__0"])
    datas = [RNG.standard_normal((3, 6)).astype(np.float32) for _ in range(2)]
    datas.append(-np.abs(datas[0]))
    return "compress1", m, datas


def topk_runtime_k():
    # K = the number of entries above 0.5: a K computed in the graph.
    nodes = [h.make_node("Greater", ["x", "half"], ["g"]),
             h.make_node("Cast", ["g"], ["gi"], to=T.INT64),
             h.make_node("ReduceSum", ["gi"], ["k"], keepdims=1),
             h.make_node("TopK", ["x", "k"], ["y", "idx"], axis=0)]
    m = model(nodes, np.zeros(7, np.float32),
              {"half": np.array(.5, np.float32)}, ["unk__0"])
    return "topkk", m, [RNG.random(7).astype(np.float32) for _ in range(3)]


def main():
    compiler, src, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    ort.set_default_logger_severity(3)
    fails = 0
    for name, m, datas in [nonzero_gather(), nms_boxes(), compress_axis1(),
                           topk_runtime_k()]:
        path = os.path.join(work, name + ".onnx")
        onnx.save(m, path)
        out = os.path.join(work, name)
        p = subprocess.run([compiler, "-model=" + path, "-backend=CPU",
                            "-emit-bundle=" + out, "-network-name=" + name],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        header = os.path.join(out, name + ".h")
        if p.returncode or "_y_EXTENT_OFFSET" not in open(header).read():
            print("%s: model-compiler: %s" % (name, p.stdout.strip()))
            fails += 1
            continue
        exe = os.path.join(out, "run")
        subprocess.run(["cc", "-std=c99", "-D_ISOC11_SOURCE", "-DNET=" + name,
                        "-include", header,
                        os.path.join(src, "tests/bundles/extent_bundle.c"),
                        os.path.join(out, name + ".o"), "-lm", "-lpthread",
                        "-o", exe], check=True)
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        for i, x in enumerate(datas):
            want = sess.run(None, {"x": x})[0]
            xin = os.path.join(out, "in%d.bin" % i)
            yout = os.path.join(out, "out%d.bin" % i)
            x.tofile(xin)
            rc = subprocess.run([exe, os.path.join(out, name + ".weights.bin"),
                                 xin, yout]).returncode
            problem = "driver exit %d" % rc if rc else None
            if not rc:
                raw = open(yout, "rb").read()
                extent = int(np.frombuffer(raw[:8], np.int64)[0])
                got = np.frombuffer(raw[8:], want.dtype)
                if got.size != want.size or not np.array_equal(
                        got, want.reshape(-1)):
                    problem = "extent %d, values differ (want shape %s)" % (
                        extent, want.shape)
            print("%-10s data %d %s: %s" % (name, i, want.shape,
                                            problem or "ok"))
            fails += problem is not None
    print("%d failure(s)" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
