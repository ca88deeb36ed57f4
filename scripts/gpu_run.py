#!/usr/bin/env python3
"""The GPU half of scripts/gpu-test.sh: needs only the prepared folder, the
CUDA driver and Python with numpy (PyTorch for the baselines).

For every NAME/ in the folder: runs NAME/run (a CUDA bundle linked with
cudart_static) on NAME/in*.bin, compares each output with the CPU backend's
NAME/ref*.bin (max|d| <= 1e-3 * max|y_ref|; Ember's CUDA kernels compute in
plain fp32, no TF32), then times it (50 runs, stream launches and CUDA-graph
replay) and prints a latency table next to PyTorch eager and torch.compile
where NAME/model.pt (TorchScript) exists."""
import glob
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

REL_TOL = 1e-3
ITERS = 50


def run_bundle(d, outdir, extra=()):
    ins = sorted(glob.glob(os.path.join(d, "in*.bin")))
    cmd = [os.path.join(d, "run"), os.path.join(d, "weights.bin"), outdir,
           *extra, *ins]
    return subprocess.run(cmd, capture_output=True, text=True)


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


def torch_latency(d):
    path = os.path.join(d, "model.pt")
    if not os.path.exists(path):
        return "-", "-"
    try:
        import torch
    except ImportError:
        return "no torch", "no torch"
    x = torch.from_numpy(
        np.fromfile(os.path.join(d, "in0.bin"), dtype=np.float32)).cuda()
    m = torch.jit.load(path).cuda().eval()
    batch = int(d.rstrip("/").split("_b")[-1])
    x = x.reshape(batch, 3, 224, 224)

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
        import torchvision
        tv = torchvision.models.resnet18().cuda().eval()
        compiled = timed(torch.compile(tv))
    except Exception as e:  # no torchvision or no torch.compile
        compiled = "n/a (%s)" % type(e).__name__
    return eager, compiled


def main():
    root = sys.argv[1]
    dirs = sorted(p for p in glob.glob(os.path.join(root, "*/"))
                  if os.path.exists(os.path.join(p, "run")))
    if not dirs:
        print("gpu-test: nothing prepared in", root)
        return 1
    failures, rows = 0, []
    for d in dirs:
        name = os.path.basename(d.rstrip("/"))
        with tempfile.TemporaryDirectory() as out:
            r = run_bundle(d, out)
            if r.returncode == 2:
                print("gpu-test: no CUDA device is present")
                return 1
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
            lat = []
            for extra in ([], ["-graph"]):
                t = run_bundle(d, out, ["-iters", str(ITERS), *extra])
                lat.append(t.stdout.split()[-1] if t.returncode == 0
                           else "error")
        rows.append((name, *lat, *torch_latency(d)))
    print("\nLatency (ms per run, mean of %d after warm-up; fp32, no TF32)"
          % ITERS)
    print("| model | Ember CUDA (stream) | Ember CUDA (graph) | "
          "PyTorch eager | torch.compile |")
    print("|---|---|---|---|---|")
    for r in rows:
        print("| %s | %s | %s | %s | %s |" % r)
    print("\n%d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
