#!/usr/bin/env python3
"""The GPU half of scripts/gpu-test.sh: needs only the prepared folder, the
CUDA driver and Python with numpy (PyTorch for the baselines, and for the
cuBLASLt/cuDNN libraries that the library-flavour bundles load).

For every NAME/ in the folder: runs NAME/run (a CUDA bundle linked with
cudart_static; NAME_gen: generated kernels only, the others with MatMul/Conv
on cuBLASLt/cuDNN) on inputs made from NAME/in*.spec, compares each output
with the CPU backend's NAME/ref*.bin (max|d| <= 1e-3 * max|y_ref|; plain
fp32, no TF32 anywhere), then times it (50 runs, stream launches and
CUDA-graph replay) and prints a latency table next to PyTorch eager and
torch.compile for resnet18. Then every node/TEST/ (an ONNX node test: the
bundle as net.so, run by ./run-so, checked against ONNX's expected
outputs). The library flavour needs libcublasLt.so.13 and libcudnn.so.9:
they are searched in LD_LIBRARY_PATH, the CUDA toolkit and PyTorch's
wheels (torch/lib, nvidia/*/lib); where absent those bundles are reported
as SKIP, not FAIL."""
import glob
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_inputs  # noqa: E402

REL_TOL = 1e-3
ITERS = 50


def library_path():
    """LD_LIBRARY_PATH with the places cuBLASLt and cuDNN may live."""
    dirs = [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
    dirs += ["/usr/local/cuda/lib64", "/usr/local/cuda/lib"]
    for mod in ("torch", "nvidia"):
        try:
            import importlib.util
            spec = importlib.util.find_spec(mod)
        except Exception:
            spec = None
        for base in (spec.submodule_search_locations or []) if spec else []:
            dirs += glob.glob(os.path.join(base, "lib"))
            dirs += glob.glob(os.path.join(base, "*", "lib"))
    return ":".join(dirs)


ENV = dict(os.environ, LD_LIBRARY_PATH=library_path())


def make_inputs(d, tmp):
    """The inputs of d: d/in*.bin as they are (node tests), or made from
    d/in*.spec (deterministic) into tmp."""
    given = sorted(glob.glob(os.path.join(d, "in*.bin")))
    if given:
        return given
    paths = []
    for spec in sorted(glob.glob(os.path.join(d, "in*.spec"))):
        path = os.path.join(tmp, os.path.basename(spec)[:-5] + ".bin")
        gpu_inputs.make(open(spec).read().strip()).tofile(path)
        paths.append(path)
    return paths


def run_bundle(d, ins, outdir, extra=()):
    if os.path.exists(os.path.join(d, "net.so")):  # a node test
        root = os.path.dirname(os.path.dirname(d.rstrip("/")))
        cmd = [os.path.join(root, "run-so"), os.path.join(d, "net.so"), "net"]
    else:
        cmd = [os.path.join(d, "run")]
    cmd += [os.path.join(d, "weights.bin"), outdir, *extra, *ins]
    return subprocess.run(cmd, capture_output=True, text=True, env=ENV)


def missing_library(r):
    """The shared library a run could not load, or None."""
    text = r.stdout + r.stderr
    if "error while loading shared libraries" in text or \
            "cannot open shared object file" in text:
        return text.strip().splitlines()[-1]
    return None


def compare(d, outdir):
    worst = 0.0
    refs = sorted(glob.glob(os.path.join(d, "ref*.bin")))
    for i, ref in enumerate(refs):
        y_ref = np.fromfile(ref, dtype=np.float32)
        y = np.fromfile(os.path.join(outdir, "out%d.bin" % i),
                        dtype=np.float32)
        if y.shape != y_ref.shape:
            return None
        scale = max(float(np.abs(y_ref).max()), 1e-30)
        worst = max(worst, float(np.abs(y - y_ref).max()) / scale)
    return worst


def resnet18(torch):
    """torchvision's resnet18 architecture in plain torch.nn (random
    weights: latency does not depend on them), so that the GPU machine needs
    no torchvision."""
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False),
                    nn.BatchNorm2d(cout))

        def forward(self, x):
            y = torch.relu(self.b1(self.c1(x)))
            y = self.b2(self.c2(y))
            return torch.relu(y + (self.down(x) if self.down else x))

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
              nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, 1000)]
    return nn.Sequential(*layers)


def torch_latency(name, ins):
    """PyTorch eager and torch.compile latency (ms) for resnet18 models."""
    if not name.startswith("resnet18_b") or name.endswith("_gen"):
        return "-", "-"
    try:
        import torch
    except ImportError:
        return "no torch", "no torch"
    batch = int(name.split("_b")[-1])
    x = torch.from_numpy(np.fromfile(ins[0], dtype=np.float32))
    x = x.reshape(batch, 3, 224, 224).cuda()
    m = resnet18(torch).cuda().eval()
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32, like Ember
    torch.backends.cudnn.allow_tf32 = False

    def timed(fn):
        with torch.no_grad():
            for _ in range(5):
                fn(x)
            torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(ITERS):
                fn(x)
            torch.cuda.synchronize()
        return "%.3f" % ((time.perf_counter() - t) * 1e3 / ITERS)

    eager = timed(m)
    try:
        compiled = timed(torch.compile(m))
    except Exception as e:  # PyTorch < 2 or no compiler toolchain
        compiled = "n/a (%s)" % type(e).__name__
    return eager, compiled


def main():
    root = sys.argv[1]
    dirs = sorted(p for p in glob.glob(os.path.join(root, "*/"))
                  if os.path.exists(os.path.join(p, "run")))
    nodes = sorted(glob.glob(os.path.join(root, "node", "*/")))
    if not dirs and not nodes:
        print("gpu-test: nothing prepared in", root)
        return 1
    failures, skipped, rows = 0, 0, []
    for d in dirs + nodes:
        name = os.path.basename(d.rstrip("/"))
        is_node = d in nodes
        with tempfile.TemporaryDirectory() as out:
            ins = make_inputs(d, out)
            r = run_bundle(d, ins, out)
            if r.returncode == 2:
                print("gpu-test: no CUDA device is present")
                return 1
            lib = missing_library(r) if r.returncode != 0 else None
            if lib:
                print("SKIP %s: %s" % (name, lib))
                skipped += 1
                continue
            if r.returncode != 0:
                print("FAIL %s: %s" % (name, (r.stdout + r.stderr).strip()))
                failures += 1
                continue
            worst = compare(d, out)
            ok = worst is not None and worst <= REL_TOL
            failures += not ok
            print("%s %-22s max|d|/max|y_ref| = %s" %
                  ("PASS" if ok else "FAIL", name,
                   "shape mismatch" if worst is None else "%.2e" % worst))
            if is_node:
                continue
            lat = []
            for extra in ([], ["-graph"]):
                t = run_bundle(d, ins, out, ["-iters", str(ITERS), *extra])
                lat.append(t.stdout.split()[-1] if t.returncode == 0
                           else "error")
            rows.append((name, *lat, *torch_latency(name, ins)))
    print("\nLatency (ms per run, mean of %d after warm-up; fp32, no TF32)"
          % ITERS)
    print("| model | Ember CUDA (stream) | Ember CUDA (graph) | "
          "PyTorch eager | torch.compile |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %s | %s | %s |" % r)
    print("\n%d failure(s), %d skipped (libraries not found)" %
          (failures, skipped))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
