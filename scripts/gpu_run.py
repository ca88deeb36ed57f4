#!/usr/bin/env python3
"""The GPU half of scripts/gpu-test.sh: needs only a prepared package, the
CUDA driver and Python with numpy (PyTorch for the baselines and for the
cuBLASLt/cuDNN libraries that the library-flavour bundles load).

    gpu_run.py PACKAGE [--timeout SECONDS] [--out DIR]

PACKAGE/kind says which call this is:
- correctness: every NAME/ (a CUDA bundle NAME/run linked with
  cudart_static; NAME_gen: generated kernels only, the others with
  MatMul/Conv on cuBLASLt/cuDNN) runs on inputs made from NAME/in*.spec,
  once with stream launches and once replaying a CUDA graph (-graph, the
  outputs cleared in between), each compared with the CPU backend's
  NAME/ref*.bin (max|d| <= 1e-3 * max|y_ref|; plain fp32, no TF32); then
  every node/TEST/ (an ONNX node test run by ./run-so) against ONNX's
  expected outputs. A failing run is rerun with -sync-each-step, which
  names the failing kernel or library op.
- latency: NAME/weights.bin is first made on the device by gpu_weights.py
  (seeded values; only the non-float constants travel), then every bundle
  is timed (stream launches and graph replay) next to PyTorch eager,
  torch.compile and PyTorch replaying a CUDA graph (gpu_torch.py, in a
  subprocess with its own timeout).

Every case runs under a timeout, the whole call under a time budget
(--budget, 270 s: cells past it read "over budget"), and the run goes on
after failures. The
full log (every command, exit code and output) and the summary table go to
--out (default PACKAGE/results): run.log and summary.md; the table is also
printed. Where no GPU is present every case reads "no device" (a dry run).
The libraries are searched in LD_LIBRARY_PATH, the CUDA toolkit and
PyTorch's wheels (torch/lib, nvidia/*/lib); where absent those bundles are
SKIP, not FAIL."""
import argparse
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


class Log:
    """The full log: every command with its exit code and output. Commands
    stop at the call's time budget: a GPU slot is short, and a summary with
    some cells "over budget" is worth more than none."""

    def __init__(self, path, budget):
        self.f = open(path, "w")
        self.deadline = time.monotonic() + budget

    def run(self, cmd, timeout):
        """(exit code, 'timeout' or 'over budget', stdout + stderr)."""
        self.f.write("$ %s\n" % " ".join(cmd))
        left = self.deadline - time.monotonic()
        if left <= 1:
            self.f.write("not run: over the time budget\n\n")
            return "over budget", ""
        timeout = min(timeout, left)
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, env=ENV,
                               timeout=timeout)
            rc, text = r.returncode, r.stdout + r.stderr
        except subprocess.TimeoutExpired as e:
            rc = "timeout"
            text = "".join(x.decode() if isinstance(x, bytes) else (x or "")
                           for x in (e.stdout, e.stderr))
        self.f.write(text + ("" if text.endswith("\n") else "\n"))
        self.f.write("exit: %s\n\n" % rc)
        self.f.flush()
        return rc, text


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


def bundle_cmd(root, d, ins, outdir, extra=()):
    if os.path.exists(os.path.join(d, "net.so")):  # a node test
        cmd = [os.path.join(root, "run-so"), os.path.join(d, "net.so"), "net"]
    else:
        cmd = [os.path.join(d, "run")]
    return cmd + [os.path.join(d, "weights.bin"), outdir, *extra, *ins]


def status(rc, text):
    """None when the run succeeded, else what to report."""
    if rc == 0:
        return None
    if rc == 2 and "no CUDA device is present" in text:
        return "no device"
    if rc == "timeout":
        return "TIMEOUT"
    if rc == "over budget":
        return "over budget"
    if "error while loading shared libraries" in text or \
            "cannot open shared object file" in text:
        return "SKIP (library not found)"
    lines = [x for x in text.strip().splitlines() if x]
    return "FAIL: " + (lines[-1] if lines else "exit %s" % rc)


def compare(d, outdir):
    """max|d|/max|y_ref| over the outputs, or None on a shape mismatch."""
    worst = 0.0
    for i, ref in enumerate(sorted(glob.glob(os.path.join(d, "ref*.bin")))):
        y_ref = np.fromfile(ref, dtype=np.float32)
        path = os.path.join(outdir, "out%d.bin" % i)
        if not os.path.exists(path):
            return None
        y = np.fromfile(path, dtype=np.float32)
        if y.shape != y_ref.shape:
            return None
        scale = max(float(np.abs(y_ref).max()), 1e-30)
        worst = max(worst, float(np.abs(y - y_ref).max()) / scale)
    return worst


def check_case(log, root, d, timeout):
    """(stream result, graph result) of one correctness case."""
    results = []
    for extra in ([], ["-graph"]):
        with tempfile.TemporaryDirectory() as out:
            ins = make_inputs(d, out)
            rc, text = log.run(bundle_cmd(root, d, ins, out, extra), timeout)
            bad = status(rc, text)
            if bad and bad.startswith("FAIL"):
                # Again, synchronizing after every step: names the culprit.
                rc2, text2 = log.run(
                    bundle_cmd(root, d, ins, out, ["-sync-each-step"]),
                    timeout)
                named = [x for x in text2.splitlines() if "step" in x]
                if named:
                    bad += " | " + named[-1]
            if bad:
                results.append(bad)
                continue
            worst = compare(d, out)
            ok = worst is not None and worst <= REL_TOL
            results.append("%s %s" % (
                "PASS" if ok else "FAIL",
                "shape mismatch" if worst is None else "%.1e" % worst))
    return results


def correctness(log, root, timeout):
    cases = sorted(p for p in glob.glob(os.path.join(root, "*/"))
                   if os.path.exists(os.path.join(p, "run")))
    cases += sorted(glob.glob(os.path.join(root, "node", "*/")))
    rows = ["| case | stream launches | CUDA graph |", "|---|---|---|"]
    failures = 0
    for d in cases:
        name = os.path.relpath(d.rstrip("/"), root)
        stream, graph = check_case(log, root, d, timeout)
        failures += sum(r.startswith(("FAIL", "TIMEOUT"))
                        for r in (stream, graph))
        rows.append("| %s | %s | %s |" % (name, stream, graph))
    return rows, failures, len(cases)


def latency(log, root, timeout):
    here = os.path.dirname(os.path.abspath(__file__))
    cases = sorted(p for p in glob.glob(os.path.join(root, "*/"))
                   if os.path.exists(os.path.join(p, "run")))
    rows = ["| model | Ember stream | Ember graph | torch eager | "
            "torch.compile | torch CUDA graph |", "|---|---|---|---|---|---|"]
    failures = 0
    for d in cases:
        name = os.path.basename(d.rstrip("/"))
        cells = []
        rc, text = log.run([sys.executable, os.path.join(here,
                                                         "gpu_weights.py"),
                            d], timeout)
        with tempfile.TemporaryDirectory() as out:
            ins = make_inputs(d, out)
            for extra in ([], ["-graph"]):
                if rc == 0:
                    rc2, t2 = log.run(bundle_cmd(root, d, ins, out,
                                                 ["-iters", str(ITERS),
                                                  *extra]), timeout)
                    bad = status(rc2, t2)
                    cells.append(bad or "%.3f ms" % float(t2.split()[-1]))
                else:
                    cells.append("over budget" if rc == "over budget" else
                                 "FAIL: weights (%s)" % rc)
            failures += sum(c.startswith(("FAIL", "TIMEOUT")) for c in cells)
            if any(c == "no device" for c in cells):
                cells += ["no device"] * 3
            else:
                rc3, t3 = log.run([sys.executable,
                                   os.path.join(here, "gpu_torch.py"), d],
                                  3 * timeout)
                got = t3.strip().splitlines()[-1].split("\t") \
                    if rc3 == 0 and t3.strip() else []
                cells += got if len(got) == 3 else \
                    [status(rc3, t3) or "n/a"] * 3
        rows.append("| %s | %s |" % (name, " | ".join(cells)))
    return rows, failures, len(cases)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("package")
    p.add_argument("--timeout", type=float, default=90,
                   help="seconds per run of a case")
    p.add_argument("--budget", type=float, default=270,
                   help="seconds for the whole call (a GPU slot is short)")
    p.add_argument("--out", help="results folder (PACKAGE/results)")
    a = p.parse_args()
    root = os.path.abspath(a.package)
    kind = open(os.path.join(root, "kind")).read().strip()
    out = a.out or os.path.join(root, "results")
    os.makedirs(out, exist_ok=True)
    log = Log(os.path.join(out, "run.log"), a.budget)
    rows, failures, n = (correctness if kind == "correctness" else latency)(
        log, root, a.timeout)
    title = ("Correctness (fp32, no TF32; max|d|/max|y_ref| <= %g)" % REL_TOL
             if kind == "correctness" else
             "Latency (ms per run, mean of %d after warm-up; fp32, no TF32)"
             % ITERS)
    text = "\n".join(["## " + title, ""] + rows +
                     ["", "%d case(s), %d failure(s)" % (n, failures), ""])
    open(os.path.join(out, "summary.md"), "w").write(text)
    print(text)
    print("full log: %s" % os.path.join(out, "run.log"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
