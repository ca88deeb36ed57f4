#!/usr/bin/env python3
"""GEMM microbenchmark: MatMul of an M x K input by a constant K x N weight
(the shape of a transformer's linear layer) through the CPU backend.

For each shape it writes a one-node ONNX model, runs
`model-runner -backend=CPU -profile` at each thread count and reports the
kernels' GFLOP/s (1 thread: the fastest of -iterations runs; more: the
mean, see measure) against the
FMA peak that scripts/benchlib/fma_peak.c measures (best of three). Both
are best-of figures, but a loaded machine can still starve the peak run
more than the GEMM run: rerun on a quiet machine for a record.

With --baseline RUNNER (another build's model-runner) both are run
alternately, --rounds times each, and the table shows both (best round).
With --precision fp32,bf16 the runner is run at each -precision the same
way (bf16: the kernels include the conversion of A to bfloat16, which the
profile counts as M K of the 2 M K N + M K flops). A value may add LLVM
features after a colon, '/'-separated: bf16:-amx-tile/-amx-bf16 runs the
vdpbf16ps kernel on an AMX host.

With --cpu-time the figures are per second of CPU time instead of wall
time, for the runner (CPU time of -iterations=N+1 runs less that of one
run, the fastest of --rounds pairs, over N) and for the peak (fma_peak.c
cpu): a rate per busy core, which other processes on a loaded machine
barely disturb (they take turns on the core rather than slow the
instructions). At more threads it also charges time a thread spends
waiting, so a poorly balanced split shows.

With --ort, onnxruntime (ort_worker.py, run by this Python) times the same
one-node model at each thread count, its fastest session.run (the call's
own overhead included), reported beside the kernels' figure.

Usage: gemm_bench.py [--build DIR] [--baseline RUNNER] [--threads 1,2]
                     [--iterations N] [--rounds R]
                     [--shapes M,K,N;M,K,N...] [--epilogue bias|relu|...]
                     [--precision fp32,bf16] [--ort] [--cpu-time]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LIB = os.path.join(ROOT, "scripts", "benchlib")
KN = [(768, 768), (768, 2304), (768, 3072), (3072, 768), (512, 512),
      (512, 2048), (2048, 512)]
SHAPES = [(m, k, n) for m in (128, 256, 50, 197) for k, n in KN] + \
    [(1, 768, 1000), (1, 2048, 1000), (7, 768, 768), (49, 768, 3072),
     (16, 512, 512), (33, 768, 768)]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("%s failed:\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return r.stdout


def fma_peak(work, threads, cpu=False):
    exe = os.path.join(work, "fma_peak")
    if not os.path.exists(exe):
        run(["clang-19", "-O2", "-march=native", "-pthread", "-w",
             os.path.join(LIB, "fma_peak.c"), "-o", exe])
    return max(float(run([exe, str(threads)] + (["cpu"] if cpu else [])))
               for _ in range(3))


def cpu_seconds(cmd):
    """CPU time (user + system) the command \p cmd took."""
    import resource
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run(cmd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + \
        (after.ru_stime - before.ru_stime)


def measure_cpu(runner, path, m, k, n, threads, iterations, rounds,
                flags=()):
    """(CPU ms per run, GFLOP per CPU second): -iterations=N+1 less
    -iterations=1 (compilation and the warm-up cancel), fastest of
    \p rounds pairs."""
    cmd = [runner, "-backend=CPU", "-model=" + path,
           "-num-threads=%d" % threads] + list(flags)
    best = None
    for _ in range(rounds):
        once = cpu_seconds(cmd + ["-iterations=1"])
        many = cpu_seconds(cmd + ["-iterations=%d" % (iterations + 1)])
        ms = max(many - once, 1e-9) * 1e3 / iterations
        best = ms if best is None else min(best, ms)
    return best, 2e-6 * m * k * n / best


def write_model(path, m, k, n, epilogue):
    """MatMul(A, B) [+ bias] [-> activation] with random constant B."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(
        (rng.random((k, n)) - 0.5).astype(np.float32), "B")]
    nodes = [helper.make_node("MatMul", ["A", "B"], ["Y0"])]
    last = "Y0"
    if epilogue != "none":
        inits.append(numpy_helper.from_array(
            rng.random(n).astype(np.float32), "bias"))
        nodes.append(helper.make_node("Add", [last, "bias"], ["Y1"]))
        last = "Y1"
    if epilogue not in ("none", "bias"):
        op = {"relu": "Relu", "sigmoid": "Sigmoid"}[epilogue]
        nodes.append(helper.make_node(op, [last], ["Y2"]))
        last = "Y2"
    nodes[-1].output[0] = "Y"
    g = helper.make_graph(
        nodes, "gemm", [helper.make_tensor_value_info(
            "A", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [m, n])],
        inits)
    onnx.save(helper.make_model(
        g, opset_imports=[helper.make_opsetid("", 17)]), path)


def measure(runner, path, threads, iterations, flags=()):
    """GFLOP/s of the whole run (all kernels) at its fastest."""
    # -profile-stat=min reads near zero on the threaded schedule (the
    # fastest of the per-thread samples), so more threads take the mean.
    stat = "min" if threads == 1 else "mean"
    out = run([runner, "-backend=CPU", "-model=" + path,
               "-num-threads=%d" % threads, "-iterations=%d" % iterations,
               "-profile", "-profile-stat=" + stat] + list(flags))
    got = re.search(r"^total\s+([\d.]+) ms per run, ([\d.]+) GFLOP, "
                    r"([\d.]+) GFLOP/s", out, re.M)
    if not got:
        sys.exit("no profile total in:\n" + out)
    return float(got.group(1)), float(got.group(3))


def ort_measure(work, path, m, k, n, threads, iterations, rounds, cpu):
    """onnxruntime's (ms, GFLOP/s) on the model at \p path: its fastest
    run, or with \p cpu its CPU time per run as measure_cpu's."""
    import json
    import numpy as np
    a = os.path.join(work, "a_%d_%d.npy" % (m, k))
    if not os.path.exists(a):
        np.save(a, np.random.default_rng(1).random((m, k), np.float32))
    cmd = [sys.executable, os.path.join(LIB, "ort_worker.py"), path, a,
           str(threads), "5"]
    if cpu:
        ms = min(max(cpu_seconds(cmd + [str(iterations + 1)]) -
                     cpu_seconds(cmd + ["1"]), 1e-9) * 1e3 / iterations
                 for _ in range(rounds))
    else:
        out = run(cmd + [str(iterations * rounds)])
        ms = min(json.loads(out.strip().splitlines()[-1])["ms"])
    return ms, 2e-6 * m * k * n / ms


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--threads", default="1,2")
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--baseline", help="model-runner to compare with")
    p.add_argument("--shapes", help="M,K,N;M,K,N;... (default: the set)")
    p.add_argument("--epilogue", default="none",
                   choices=["none", "bias", "relu", "sigmoid"])
    p.add_argument("--precision", default="fp32",
                   help="comma-separated -precision values (fp32,bf16)")
    p.add_argument("--cpu-time", action="store_true",
                   help="per second of CPU time, not wall time")
    p.add_argument("--ort", action="store_true",
                   help="also time onnxruntime on each shape")
    args = p.parse_args()
    runner = os.path.join(args.build, "bin", "model-runner")
    threads = [int(t) for t in args.threads.split(",")]
    shapes = SHAPES
    if args.shapes:
        shapes = [tuple(int(v) for v in s.split(","))
                  for s in args.shapes.split(";")]
    precisions = args.precision.split(",")
    runners, names = [], []
    for r, nm in [(runner, "new")] + (
            [(args.baseline, "base")] if args.baseline else []):
        for pr in precisions:
            prec, _, mattr = pr.partition(":")
            flags = ["-precision=" + prec]
            if mattr:
                flags.append("-mattr=" + mattr.replace("/", ","))
            runners.append((r, flags))
            names.append(" ".join(
                x for x in (nm if args.baseline else "",
                            pr if len(precisions) > 1 else "") if x) + " ")
    names = [n if n.strip() else "" for n in names]
    with tempfile.TemporaryDirectory() as work:
        # With --cpu-time both figures are per busy core at any thread
        # count (flops over the CPU time of all threads).
        peaks = {t: fma_peak(work, t, args.cpu_time) for t in threads}
        print(("Per CPU second. " if args.cpu_time else "") +
              "FMA peak (fma_peak.c, best of 3): " + ", ".join(
            "%dT %.1f GFLOP/s" % (t, peaks[t]) for t in threads))
        cols = ["%s%dT ms | %s%dT GFLOP/s | %s%dT %% peak" % (
            nm, t, nm, t, nm, t) for t in threads for nm in names +
            (["ORT "] if args.ort else [])]
        print("| M | K | N | " + " | ".join(cols) + " |")
        print("|" + "---|" * (3 + len(cols) * 3))
        for m, k, n in shapes:
            path = os.path.join(work, "mm_%d_%d_%d.onnx" % (m, k, n))
            write_model(path, m, k, n, args.epilogue)
            cells = []
            for t in threads:
                best = [None] * len(runners)
                for _ in range(0 if args.cpu_time else args.rounds):
                    for i, (r, flags) in enumerate(runners):
                        got = measure(r, path, t, args.iterations, flags)
                        if best[i] is None or got[0] < best[i][0]:
                            best[i] = got
                if args.cpu_time:
                    best = [measure_cpu(r, path, m, k, n, t, args.iterations,
                                        args.rounds, flags)
                            for r, flags in runners]
                if args.ort:
                    best.append(ort_measure(work, path, m, k, n, t,
                                            args.iterations, args.rounds,
                                            args.cpu_time))
                for ms, gf in best:
                    cells.append("%.4f | %.1f | %.0f" %
                                 (ms, gf, 100 * gf / peaks[t]))
            print("| %d | %d | %d | %s |" % (m, k, n, " | ".join(cells)),
                  flush=True)

if __name__ == "__main__":
    main()
