#!/usr/bin/env python3
"""Runs the side-by-side benchmark behind scripts/bench.

For each zoo model: export (models/zoo/export.py), compile Ember's CPU bundle
(model-compiler -bundle-shared, timed), compile TVM once, freeze a
TorchScript copy once; then in ROUNDS interleaved rounds, for each thread
count, time every engine in its own fresh process (warm-up runs, then
ITERS timed runs; the process reports its median). The table shows, per
engine, the median over rounds and the spread (max-min over rounds as a
percentage of the median), ratios to onnxruntime, Ember's achieved GFLOP/s
against a measured FMA peak, and compile times. Writes docs/Performance.md.
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LIB = os.path.join(ROOT, "scripts", "benchlib")
ZOO = ["resnet50", "resnet18", "mobilenet_v2", "squeezenet1_1",
       "densenet121", "shufflenet_v2_x1_0", "efficientnet_b0", "googlenet",
       "inception_v3"]
ENGINES = ["ember", "ort", "tvm", "torch"]
MARKER = ("<!-- Everything above is written by scripts/bench; everything "
          "below is kept. -->")


def run(cmd, env=None, timeout=3600):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError("%s failed:\n%s%s" % (" ".join(cmd), r.stdout,
                                                 r.stderr))
    return r.stdout


def last_json(out):
    return json.loads(out.strip().splitlines()[-1])


def model_flops(path):
    """2 * multiply-accumulates of Conv, Gemm and MatMul (ONNX shapes)."""
    import onnx
    from onnx import shape_inference
    m = shape_inference.infer_shapes(onnx.load(path))
    shapes = {}
    for vi in list(m.graph.value_info) + list(m.graph.input) + \
            list(m.graph.output):
        dims = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        shapes[vi.name] = dims
    for init in m.graph.initializer:
        shapes[init.name] = list(init.dims)
    total = 0
    for n in m.graph.node:
        if n.op_type == "Conv":
            w = shapes[n.input[1]]
            y = shapes.get(n.output[0])
            if y:
                per_out = w[1] * w[2] * w[3]
                total += 2 * per_out * y[0] * y[1] * y[2] * y[3]
        elif n.op_type in ("Gemm", "MatMul"):
            a, b = shapes.get(n.input[0]), shapes.get(n.input[1])
            y = shapes.get(n.output[0])
            if a and b and y:
                k = b[-1] if (n.op_type == "Gemm" and any(
                    at.name == "transB" and at.i for at in n.attribute)) \
                    else b[-2]
                size = 1
                for d in y:
                    size *= d
                total += 2 * size * k
    return total


def fma_peak(work, threads):
    exe = os.path.join(work, "fma_peak")
    if not os.path.exists(exe):
        run(["clang-19", "-O2", "-march=native", "-pthread",
             os.path.join(LIB, "fma_peak.c"), "-o", exe])
    return max(float(run([exe, str(threads)])) for _ in range(3))


def prepare(args, name, work):
    """Exports and compiles everything once; returns per-engine info."""
    zoo = os.path.join(work, "zoo")
    onnx_path = os.path.join(zoo, name + ".onnx")
    if not os.path.exists(onnx_path):
        run(["/usr/bin/python3", os.path.join(ROOT, "models", "zoo",
                                              "export.py"), zoo,
             "--models", name])
    import numpy as np
    import onnx
    import onnx.numpy_helper as nh
    x = nh.to_array(onnx.load_tensor(os.path.join(zoo, name + ".input.pb")))
    npy = os.path.join(work, name + ".npy")
    np.save(npy, x)
    raw = os.path.join(work, name + ".bin")
    x.astype("float32").tofile(raw)
    info = {"onnx": onnx_path, "npy": npy, "raw": raw, "compile_s": {}}
    if "ember" in args.engines:
        out = os.path.join(work, "ember", name)
        t0 = time.perf_counter()
        run([os.path.join(args.build_dir, "bin", "model-compiler"),
             "-model=" + onnx_path, "-backend=CPU", "-emit-bundle=" + out,
             "-network-name=net", "-bundle-shared"])
        info["compile_s"]["ember"] = time.perf_counter() - t0
        info["bundle"] = os.path.join(out, "net")
    info["skip"] = {}  # engine -> why it cannot run this model
    if "tvm" in args.engines:
        lib = os.path.join(work, name + ".tvm.so")
        try:  # a peer failing on one model must not drop the others' rows
            r = last_json(run([sys.executable,
                               os.path.join(LIB, "tvm_worker.py"),
                               "compile", onnx_path, lib, args.mcpu]))
            info["compile_s"]["tvm"] = r["compile_s"]
            info["tvm_lib"] = lib
            info["tvm_version"] = r["tvm"]
        except Exception as e:
            info["skip"]["tvm"] = str(e).strip().splitlines()[-1][:200]
    if "torch" in args.engines:
        pt = os.path.join(work, name + ".pt")
        run(["/usr/bin/python3", os.path.join(LIB, "torch_worker.py"),
             "freeze", name, pt])
        info["torch_model"] = pt
    return info


def time_engine(args, engine, info, threads, driver):
    iters = args.iters if engine != "tvm" else args.tvm_iters
    common = [str(threads), str(args.warmup), str(iters)]
    if engine == "ember":
        cmd = [driver, info["bundle"], info["raw"]] + common
    elif engine == "ort":
        cmd = [sys.executable, os.path.join(LIB, "ort_worker.py"),
               info["onnx"], info["npy"]] + common
    elif engine == "tvm":
        cmd = [sys.executable, os.path.join(LIB, "tvm_worker.py"), "time",
               info["tvm_lib"], info["npy"]] + common
    else:
        cmd = ["/usr/bin/python3", os.path.join(LIB, "torch_worker.py"),
               "time", info["torch_model"], info["npy"]] + common
    env = dict(os.environ, OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    return statistics.median(last_json(run(cmd, env=env))["ms"])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build-dir", default="build")
    p.add_argument("--models", default=",".join(ZOO))
    p.add_argument("--threads", default="1,2")
    p.add_argument("--engines", default=",".join(ENGINES))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--tvm-iters", type=int, default=2,
                   help="TVM's untuned builds are slow: fewer timed runs")
    p.add_argument("--mcpu", default="native",
                   help="CPU for TVM's llvm target ('native': the host's)")
    p.add_argument("--work-dir", default=None)
    p.add_argument("--out", default=os.path.join(ROOT, "docs",
                                                 "Performance.md"))
    args = p.parse_args()
    args.build_dir = os.path.abspath(args.build_dir)
    args.engines = args.engines.split(",")
    for e in args.engines:
        if e not in ENGINES:
            p.error("unknown engine '%s' (known: %s)" % (e, ",".join(ENGINES)))
    if args.mcpu == "native":
        args.mcpu = host_cpu()
    work = os.path.abspath(args.work_dir or
                           os.path.join(args.build_dir, "bench"))
    os.makedirs(os.path.join(work, "ember"), exist_ok=True)
    threads = [int(t) for t in args.threads.split(",")]
    models = args.models.split(",")

    driver = os.path.join(work, "ember_driver")
    if "ember" in args.engines:
        run(["cc", "-O2", "-I", os.path.join(ROOT, "include"),
             os.path.join(LIB, "ember_driver.c"), "-o", driver, "-ldl"])
    peaks = {t: fma_peak(work, t) for t in threads}
    infos, flops, failures = {}, {}, {}
    for m in models:
        print("preparing %s ..." % m, flush=True)
        try:
            infos[m] = prepare(args, m, work)
            flops[m] = model_flops(infos[m]["onnx"])
        except Exception as e:  # report and go on with the other models
            failures[m] = str(e).strip().splitlines()[-1][:200]
            print("  %s: %s" % (m, failures[m]), flush=True)
    results = {}  # (model, engine, threads) -> [medians per round]
    for r in range(args.rounds):
        for m in infos:
            for t in threads:
                for e in args.engines:
                    if e in infos[m]["skip"]:
                        failures["%s/%s" % (m, e)] = infos[m]["skip"][e]
                        continue
                    try:
                        ms = time_engine(args, e, infos[m], t, driver)
                    except Exception as ex:
                        failures["%s/%s" % (m, e)] = \
                            str(ex).strip().splitlines()[-1][:200]
                        continue
                    results.setdefault((m, e, t), []).append(ms)
        print("round %d of %d done" % (r + 1, args.rounds), flush=True)
    write_report(args, models, threads, infos, flops, peaks, results,
                 failures)


def host_cpu():
    """The CPU name clang-19 picks for -march=native (e.g. znver5)."""
    r = subprocess.run(["clang-19", "-march=native", "-###", "-x", "c", "-",
                        "-c", "-o", "/dev/null"], input="",
                       capture_output=True, text=True)
    toks = r.stderr.replace('"', " ").split()
    if "-target-cpu" in toks:
        return toks[toks.index("-target-cpu") + 1]
    return "x86-64-v3"


def fmt_ms(vals):
    if not vals:
        return "—"
    med = statistics.median(vals)
    spread = (max(vals) - min(vals)) / med * 100 if med else 0
    return "%.2f ±%.0f%%" % (med, spread / 2)


def write_report(args, models, threads, infos, flops, peaks, results,
                 failures):
    lines = ["# Performance", "",
             "Generated by `scripts/bench %s` on %s (%s, %d cores)." % (
                 " ".join(sys.argv[1:]) or "",
                 datetime.date.today().isoformat(), platform.processor() or
                 platform.machine(), os.cpu_count()),
             "",
             "Each cell: median over %d interleaved rounds of each round's "
             "median (%d warm-up + %d timed runs in a fresh process; TVM %d "
             "timed runs), ± half the spread across rounds. Ratios are to "
             "onnxruntime at the same thread count (< 1 is faster than "
             "onnxruntime)." % (args.rounds, args.warmup, args.iters,
                                args.tvm_iters), "",
             "Measured peak (FMA micro-benchmark, scripts/benchlib/"
             "fma_peak.c): " + ", ".join("%d thread(s) %.1f GFLOP/s" %
                                        (t, peaks[t]) for t in threads),
             ""]
    for t in threads:
        lines += ["## %d thread%s" % (t, "s" if t > 1 else ""), "",
                  "| model | GFLOP | Ember ms | onnxruntime ms | TVM ms | "
                  "PyTorch ms | Ember/ORT | TVM/ORT | PyTorch/ORT | "
                  "Ember GFLOP/s (% of peak) |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for m in models:
            if m not in infos:
                continue
            r = {e: results.get((m, e, t), []) for e in ENGINES}
            med = {e: statistics.median(v) if v else None
                   for e, v in r.items()}

            def ratio(e):
                if med[e] is None or med["ort"] is None:
                    return "—"
                return "%.2f" % (med[e] / med["ort"])
            g = flops[m] / 1e9
            eff = "—"
            if med["ember"]:
                gs = g / (med["ember"] / 1e3)
                eff = "%.1f (%.0f%%)" % (gs, gs / peaks[t] * 100)
            lines.append("| %s | %.2f | %s | %s | %s | %s | %s | %s | %s | %s |"
                         % (m, g, fmt_ms(r["ember"]), fmt_ms(r["ort"]),
                            fmt_ms(r["tvm"]), fmt_ms(r["torch"]),
                            ratio("ember"), ratio("tvm"), ratio("torch"),
                            eff))
        lines.append("")
    lines += ["## Compile time (seconds)", "", "| model | Ember | TVM |",
              "|---|---|---|"]
    for m in models:
        if m in infos:
            c = infos[m]["compile_s"]
            lines.append("| %s | %s | %s |" % (
                m, "%.2f" % c["ember"] if "ember" in c else "—",
                "%.1f" % c["tvm"] if "tvm" in c else "—"))
    versions = []
    for info in infos.values():
        if "tvm_version" in info:
            versions.append("Apache TVM %s (Relax ONNX frontend, "
                            "`relax.build` default pipeline for "
                            "{kind: llvm, mcpu: %s}, no tuning)" %
                            (info["tvm_version"], args.mcpu))
            break
    lines += ["", "## Setup", "",
              "- Ember: CPU bundle from `model-compiler -backend=CPU "
              "-bundle-shared`, timed through the bundle ABI by "
              "scripts/benchlib/ember_driver.c (`NAME` at 1 thread, "
              "`NAME_mt` above).",
              "- onnxruntime: CPU provider, intra_op_num_threads = threads, "
              "sequential execution, all graph optimizations.",
              "- PyTorch: Debian's torch, TorchScript traced and frozen, "
              "torch.set_num_threads(threads)."] + \
        ["- " + v for v in versions]
    if failures:
        lines += ["", "## Not measured", ""]
        lines += ["- %s: %s" % (k, v) for k, v in sorted(failures.items())]
    # Hand-written sections after the marker survive a rerun.
    kept = ""
    if os.path.exists(args.out):
        old = open(args.out).read()
        if MARKER in old:
            kept = old[old.index(MARKER):]
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n\n" + (kept or MARKER + "\n"))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
