#!/usr/bin/env python3
"""Steady latency of Ember's CPU bundles beside onnxruntime
(docs/Reliability.md#steady-latency).

    scripts/latency.py --zoo DIR [--models a,b] [--threads 1,2]
                       [--procs 10] [--calls 1000] [--build-dir build]

For each model, thread count and machine state (quiet, and with one
competing busy process), starts --procs fresh processes per engine, each
timing --calls consecutive calls after a warm-up. Ember runs its bundle
through the bundle ABI (scripts/benchlib/ember_driver.c, the worker of
scripts/bench); onnxruntime runs scripts/benchlib/ort_worker.py. Reports,
per engine, the median over processes of p50, p95 and p99 of each process's
calls, the tail ratios p95/p50 and p99/p50, and the spread of the
processes' medians (max / min). Run it with the bench venv's python
(/work/main/.venv-bench or .venv-bench: onnxruntime, onnx, numpy).
Models come from models/zoo/export.py's directory (NAME.onnx and
NAME.input.pb).
"""
import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.path.join(ROOT, "scripts", "benchlib")
WARMUP = 20


def fail(msg):
    sys.exit("latency.py: error: " + msg)


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        fail("%s failed (%d): %s" % (os.path.basename(cmd[0]), r.returncode,
                                     (r.stderr.strip().splitlines() or [""])[-1]))
    return r.stdout


def prepare(args, name, work):
    """Compiles NAME's shared bundle; writes its input as .npy and raw."""
    import numpy as np
    from onnx import TensorProto, numpy_helper
    onnx_path = os.path.join(args.zoo, name + ".onnx")
    pb = os.path.join(args.zoo, name + ".input.pb")
    for f in (onnx_path, pb):
        if not os.path.isfile(f):
            fail("missing %s (export the zoo with models/zoo/export.py)" % f)
    t = TensorProto()
    with open(pb, "rb") as f:
        t.ParseFromString(f.read())
    x = numpy_helper.to_array(t)
    npy, raw = os.path.join(work, name + ".npy"), os.path.join(work, name + ".bin")
    np.save(npy, x)
    x.tofile(raw)
    out = os.path.join(work, name)
    run([os.path.join(args.build_dir, "bin", "model-compiler"),
         "-model=" + onnx_path, "-backend=CPU", "-quiet",
         "-emit-bundle=" + out, "-network-name=net", "-bundle-shared"])
    return {"onnx": onnx_path, "npy": npy, "raw": raw,
            "bundle": os.path.join(out, "net")}


def one_process(engine, info, threads, calls, driver):
    """The per-call times (ms) of one fresh process."""
    common = [str(threads), str(WARMUP), str(calls)]
    if engine == "ember":
        cmd = [driver, info["bundle"], info["raw"]] + common
    else:
        cmd = [sys.executable, os.path.join(LIB, "ort_worker.py"),
               info["onnx"], info["npy"]] + common
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    return json.loads(run(cmd, env).strip().splitlines()[-1])["ms"]


def quantile(xs, q):
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def summarize(runs):
    p50 = [quantile(r, 0.50) for r in runs]
    p95 = [quantile(r, 0.95) for r in runs]
    p99 = [quantile(r, 0.99) for r in runs]
    med = statistics.median
    return {"p50": med(p50), "p95": med(p95), "p99": med(p99),
            "r95": med([b / a for a, b in zip(p50, p95)]),
            "r99": med([b / a for a, b in zip(p50, p99)]),
            "spread": max(p50) / min(p50)}


def busy():
    while True:
        pass


def measure(args, name, info, threads, loaded, driver):
    hog = None
    if loaded:
        hog = multiprocessing.Process(target=busy, daemon=True)
        hog.start()
    try:
        res = {}
        # Engines alternate process by process, so that a change in the
        # machine's load during the run touches both alike.
        runs = {"ember": [], "ort": []}
        for _ in range(args.procs):
            for engine in runs:
                runs[engine].append(
                    one_process(engine, info, threads, args.calls, driver))
        for engine, r in runs.items():
            res[engine] = summarize(r)
        return res
    finally:
        if hog:
            hog.terminate()
            hog.join()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--zoo", required=True)
    p.add_argument("--models", default="squeezenet1_1,shufflenet_v2_x1_0,"
                   "mobilenet_v2")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--procs", type=int, default=10)
    p.add_argument("--calls", type=int, default=1000)
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    p.add_argument("--json", help="also write the results here")
    args = p.parse_args()
    if args.procs < 1 or args.calls < 10:
        fail("--procs must be at least 1 and --calls at least 10")
    work = tempfile.mkdtemp(prefix="ember-latency-")
    driver = os.path.join(work, "ember_driver")
    run(["cc", "-O2", "-I", os.path.join(ROOT, "include"),
         os.path.join(LIB, "ember_driver.c"), "-o", driver, "-ldl"])
    print("| model | threads | load | engine | p50 (ms) | p95 (ms) | p99 (ms) "
          "| p95/p50 | p99/p50 | medians max/min |")
    print("| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    results = []
    for name in args.models.split(","):
        info = prepare(args, name, work)
        for threads in [int(t) for t in args.threads.split(",")]:
            for loaded in (False, True):
                res = measure(args, name, info, threads, loaded, driver)
                for engine, s in res.items():
                    print("| %s | %d | %s | %s | %.3f | %.3f | %.3f | %.2f "
                          "| %.2f | %.2f |" % (
                              name, threads, "busy" if loaded else "quiet",
                              engine, s["p50"], s["p95"], s["p99"], s["r95"],
                              s["r99"], s["spread"]), flush=True)
                    results.append(dict(s, model=name, threads=threads,
                                        busy=loaded, engine=engine))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
