#!/usr/bin/env python3
"""Runs the side-by-side benchmark behind scripts/bench.

Two model sets: --set cnn (the torchvision zoo, models/zoo/export.py) and
--set transformers (models/transformers/export.py: vit_b_16, swin_t, a
BERT-base-style encoder, a GPT-2-small-style decoder). For each model:
export, compile Ember's CPU bundle (model-compiler -bundle-shared, timed),
compile TVM once, freeze a TorchScript copy once; then in ROUNDS interleaved
rounds, for each thread count, time every engine (Ember, onnxruntime,
OpenVINO, TVM, PyTorch) in its own fresh process (warm-up runs, then ITERS
timed runs; the process reports its median). The table shows, per engine,
the median over rounds and the spread (max-min over rounds as a percentage
of the median), ratios to onnxruntime and OpenVINO, Ember's achieved GFLOP/s
against a measured FMA peak, and compile times; its header names every
engine's version, Ember's commit and the CPU. An engine that cannot compile
or run a model gets a labelled cell and a note; the table goes on. Writes
docs/Performance.md: the cnn set the part above the hand-written notes, the
transformer set its own section below them. The peers' versions are pinned
in scripts/requirements-bench.txt (scripts/bench installs them into
.venv-bench).
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402

ROOT = report.ROOT
LIB = os.path.join(ROOT, "scripts", "benchlib")
ZOO = ["resnet50", "resnet18", "mobilenet_v2", "squeezenet1_1",
       "densenet121", "shufflenet_v2_x1_0", "efficientnet_b0", "googlenet",
       "inception_v3"]
TRANSFORMERS = ["vit_b_16", "swin_t", "bert_base", "gpt2_small"]
# The test-size copies (tests/transformers): accepted by --models for quick
# runs of the bench itself, never part of the default set.
TRANSFORMERS_MINI = ["vit_mini", "swin_mini", "bert_mini", "gpt_mini"]
SETS = {"cnn": ("zoo", ZOO, ZOO),
        "transformers": ("transformers", TRANSFORMERS,
                         TRANSFORMERS + TRANSFORMERS_MINI)}
ENGINES = report.ENGINES


class Failed(Exception):
    """An engine could not compile or run a model; str() is the cell label
    and detail the message for the notes."""

    def __init__(self, label, detail=""):
        super().__init__(label)
        self.detail = detail


def error_line(text, rc):
    """The line of a failed tool's output that names the error: the last
    one that says error or exception (tools print warnings after it)."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    named = [ln for ln in lines if re.search(r"error|exception|failed", ln,
                                             re.I) and "Warning" not in ln]
    return ((named or lines or ["exit status %d" % rc])[-1])[:300]


def run(cmd, env=None, timeout=3600, what="run"):
    """Runs cmd; raises Failed("WHAT error") or Failed("WHAT > N s")."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failed("%s > %d s" % (what, timeout),
                     "stopped after %d s: %s" % (timeout, " ".join(cmd)))
    if r.returncode != 0:
        raise Failed("%s error" % what,
                     error_line(r.stdout + r.stderr, r.returncode))
    return r.stdout


def last_json(out):
    return json.loads(out.strip().splitlines()[-1])


def fma_peak(work, threads):
    exe = os.path.join(work, "fma_peak")
    if not os.path.exists(exe):
        run(["clang-19", "-O2", "-march=native", "-pthread",
             os.path.join(LIB, "fma_peak.c"), "-o", exe])
    return max(float(run([exe, str(threads)])) for _ in range(3))


def dot_peak(work, kind, threads):
    """The int8 (vpdpbusd) or bf16 (vdpbf16ps) peak in GOP/s, 0 where the
    machine lacks the instruction."""
    exe = os.path.join(work, "dot_peak")
    if not os.path.exists(exe):
        run(["clang-19", "-O2", "-march=native", "-pthread",
             os.path.join(LIB, "dot_peak.c"), "-o", exe])
    return max(float(run([exe, kind, str(threads)])) for _ in range(3))


def measured_peaks(args, work, threads):
    """Per thread count, the peak of the instruction path the precision
    uses (int8: vpdpbusd, bf16: vdpbf16ps, else fp32 FMA), and the line
    that names it in the report."""
    if args.precision in ("int8", "bf16"):
        what = {"int8": "int8 vpdpbusd", "bf16": "bf16 vdpbf16ps"}
        peaks = {t: dot_peak(work, args.precision, t) for t in threads}
        if all(peaks[t] > 0 for t in threads):
            return peaks, ("Measured peak (%s micro-benchmark, "
                           "scripts/benchlib/dot_peak.c, 2 operations per "
                           "multiply-add): " % what[args.precision] +
                           ", ".join("%d thread(s) %.1f GOP/s" % (t, peaks[t])
                                     for t in threads))
    peaks = {t: fma_peak(work, t) for t in threads}
    return peaks, ("Measured peak (FMA micro-benchmark, scripts/benchlib/"
                   "fma_peak.c): " + ", ".join(
                       "%d thread(s) %.1f GFLOP/s" % (t, peaks[t])
                       for t in threads))


def export_inputs(args, name, work, export=True):
    """Exports NAME unless an export newer than the export code is there;
    returns (onnx path, [(input name, array)])."""
    import onnx
    import onnx.numpy_helper as nh
    kind = SETS[args.set][0]
    out = os.path.join(work, kind)
    onnx_path = os.path.join(out, name + ".onnx")
    if kind == "zoo":
        pbs = [os.path.join(out, name + ".input.pb")]
    else:
        pbs = [os.path.join(out, "%s.input_%d.pb" % (name, k))
               for k in range(len(glob.glob(
                   os.path.join(out, name + ".input_*.pb"))))]
    code = max(os.path.getmtime(p) for p in
               glob.glob(os.path.join(ROOT, "models", kind, "*.py")))
    if not all(os.path.exists(p) for p in [onnx_path] + pbs) or not pbs or \
            os.path.getmtime(onnx_path) < code:
        if not export:
            raise Failed("export error", "no %s or its inputs" % onnx_path)
        run(["/usr/bin/python3", os.path.join(ROOT, "models", kind,
                                              "export.py"), out,
             "--models", name], timeout=args.compile_timeout, what="export")
        return export_inputs(args, name, work, export=False)
    tensors = [onnx.load_tensor(p) for p in pbs]
    return onnx_path, [(t.name, nh.to_array(t)) for t in tensors]


def zero_dropouts(model):
    """Dropout nodes with a training_mode input whose ratio is a constant 0:
    identities in any mode (torchvision 0.14's Swin exports them)."""
    import onnx.numpy_helper as nh
    consts = {i.name: i for i in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "Constant" and n.attribute[0].name == "value":
            consts[n.output[0]] = n.attribute[0].t
    return [n for n in model.graph.node
            if n.op_type == "Dropout" and len(n.input) == 3 and
            n.input[1] in consts and not nh.to_array(consts[n.input[1]]).any()]


def ov_model(name, work, info):
    """OpenVINO's ONNX frontend rejects Dropout with training_mode even where
    the ratio is 0; it runs a copy whose such nodes keep only their data
    input (the same function), and the report says so."""
    import onnx
    model = onnx.load(info["onnx"])
    nodes = zero_dropouts(model)
    info["ov_onnx"] = info["onnx"]
    if nodes:
        for n in nodes:
            del n.input[1:]
        info["ov_onnx"] = os.path.join(work, name + ".ov.onnx")
        onnx.save(model, info["ov_onnx"])
        info["ov_note"] = ("OpenVINO ran a copy in which %d Dropout nodes "
                           "with ratio 0 and training_mode=true keep only "
                           "their data input (its ONNX frontend rejects "
                           "training_mode; the function is the same)" %
                           len(nodes))


def quantized(args, name, onnx_path):
    """--precision int8: the QDQ file onnxruntime's quantize_static makes
    of ONNX_PATH (quantize_qdq.py; made once, kept beside the export)."""
    out = onnx_path[:-len(".onnx")] + ".qdq.onnx"
    if not os.path.exists(out) or \
            os.path.getmtime(out) < os.path.getmtime(onnx_path):
        run([sys.executable, os.path.join(LIB, "quantize_qdq.py"), onnx_path,
             out], timeout=args.compile_timeout, what="quantize")
    return out


def prepare(args, name, work):
    """Exports and compiles everything once; returns per-engine info."""
    import numpy as np
    onnx_path, inputs = export_inputs(args, name, work)
    if args.precision == "int8":
        onnx_path = quantized(args, name, onnx_path)
    npys, raws = [], []
    for k, (tname, x) in enumerate(inputs):
        npys.append(os.path.join(work, "%s.%d.npy" % (name, k)))
        np.save(npys[-1], x)
        raw = os.path.join(work, "%s.%d.bin" % (name, k))
        x.tofile(raw)
        raws.append("%s=%s" % (tname, raw))
    info = {"onnx": onnx_path, "npys": ",".join(npys), "raws": ",".join(raws),
            "compile_s": {}, "skip": {}}  # skip: engine -> Failed
    if "ov" in args.engines:
        ov_model(name, work, info)
    for engine, step in (("ember", compile_ember), ("tvm", compile_tvm),
                         ("torch", freeze_torch)):
        if engine in args.engines:
            try:  # one engine failing on a model must not drop the others
                step(args, name, work, info)
            except Failed as e:
                info["skip"][engine] = e
                print("  %s: %s: %s" % (engine, e, e.detail), flush=True)
    return info


def compile_ember(args, name, work, info):
    out = os.path.join(work, "ember", name + "." + args.precision)
    t0 = time.perf_counter()
    run([os.path.join(args.build_dir, "bin", "model-compiler"),
         "-model=" + info["onnx"], "-backend=CPU", "-emit-bundle=" + out,
         "-network-name=net", "-bundle-shared",
         "-precision=" + ("bf16" if args.precision == "bf16" else "fp32")],
        timeout=args.compile_timeout, what="compile")
    info["compile_s"]["ember"] = time.perf_counter() - t0
    info["bundle"] = os.path.join(out, "net")
    weights = os.path.join(out, "net.weights.bin")
    if os.path.exists(weights):
        print("  ember bundle weights: %.1f MB" %
              (os.path.getsize(weights) / 1e6), flush=True)


def compile_tvm(args, name, work, info):
    lib = os.path.join(work, name + ".tvm.so")
    r = last_json(run([sys.executable, os.path.join(LIB, "tvm_worker.py"),
                       "compile", info["onnx"], lib, args.mcpu],
                      timeout=args.compile_timeout, what="compile"))
    info["compile_s"]["tvm"] = r["compile_s"]
    info["tvm_lib"] = lib
    info["tvm_version"] = r["tvm"]


def freeze_torch(args, name, work, info):
    pt = os.path.join(work, name + ".pt")
    run(["/usr/bin/python3", os.path.join(LIB, "torch_worker.py"), "freeze",
         SETS[args.set][0], name, pt], timeout=args.compile_timeout,
        what="freeze")
    info["torch_model"] = pt


def time_engine(args, engine, info, threads, driver):
    """The median of one fresh process's timed runs (ms) and its JSON."""
    iters = args.iters if engine != "tvm" else args.tvm_iters
    common = [str(threads), str(args.warmup), str(iters)]
    if engine == "ember":
        cmd = [driver, info["bundle"], info["raws"]] + common
    elif engine == "ort":
        cmd = [sys.executable, os.path.join(LIB, "ort_worker.py"),
               info["onnx"], info["npys"]] + common
    elif engine == "ov":
        cmd = [sys.executable, os.path.join(LIB, "ov_worker.py"),
               info["ov_onnx"], info["npys"]] + common + [
                   "bf16" if args.precision == "bf16" else "f32"]
    elif engine == "tvm":
        cmd = [sys.executable, os.path.join(LIB, "tvm_worker.py"), "time",
               info["tvm_lib"], info["npys"]] + common
    else:
        cmd = ["/usr/bin/python3", os.path.join(LIB, "torch_worker.py"),
               "time", info["torch_model"], info["npys"]] + common
    env = dict(os.environ, OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    out = last_json(run(cmd, env=env, timeout=args.run_timeout))
    return statistics.median(out["ms"]), out


def parse_args():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--build-dir", default="build",
                   help="Ember build with bin/model-compiler")
    p.add_argument("--set", choices=sorted(SETS), default="cnn",
                   help="model set: cnn (%s) or transformers (%s); it picks "
                   "the default --models and the report section" %
                   (", ".join(ZOO), ", ".join(TRANSFORMERS)))
    p.add_argument("--models", default=None,
                   help="comma-separated models of the set (default: all; "
                   "transformers also accepts the test sizes %s)" %
                   ", ".join(TRANSFORMERS_MINI))
    p.add_argument("--precision", choices=["fp32", "bf16", "int8"],
                   default="fp32",
                   help="bf16: Ember compiles with -precision=bf16 and "
                   "OpenVINO runs with INFERENCE_PRECISION_HINT=bf16 (only "
                   "those two engines take it); int8: every engine runs the "
                   "model as onnxruntime's quantize_static writes it (QDQ, "
                   "per-channel Int8 weights, UInt8 activations; "
                   "quantize_qdq.py). Reports other than fp32 go to "
                   "WORK_DIR/Performance-PRECISION.md unless --out says")
    p.add_argument("--threads", default="1,2",
                   help="comma-separated thread counts, one table each")
    p.add_argument("--engines", default=",".join(ENGINES),
                   help="comma-separated subset of " + ",".join(ENGINES) +
                   " (ov: OpenVINO)")
    p.add_argument("--rounds", type=int, default=3,
                   help="interleaved rounds (a fresh process per engine, "
                   "model and thread count in each)")
    p.add_argument("--warmup", type=int, default=3,
                   help="untimed runs at the start of each process")
    p.add_argument("--iters", type=int, default=10,
                   help="timed runs per process (their median counts)")
    p.add_argument("--tvm-iters", type=int, default=2,
                   help="TVM's untuned builds are slow: fewer timed runs")
    p.add_argument("--compile-timeout", type=int, default=1800,
                   help="seconds an export, Ember or TVM compile or a "
                   "TorchScript freeze may take; a slower one gets a cell "
                   "like 'compile > N s' and the table goes on")
    p.add_argument("--run-timeout", type=int, default=3600,
                   help="seconds one timing process may take")
    p.add_argument("--mcpu", default="native",
                   help="CPU for TVM's llvm target ('native': the host's)")
    p.add_argument("--work-dir", default=None,
                   help="exports, bundles and inputs (default: "
                   "BUILD_DIR/bench; exports are reused)")
    p.add_argument("--out", default=None,
                   help="the report to update (default: docs/Performance.md)")
    args = p.parse_args()
    args.build_dir = os.path.abspath(args.build_dir)
    if args.out is None:
        args.out = (os.path.join(ROOT, "docs", "Performance.md")
                    if args.precision == "fp32" else
                    os.path.join(os.path.abspath(
                        args.work_dir or os.path.join(args.build_dir,
                                                      "bench")),
                        "Performance-%s.md" % args.precision))
    args.engines = args.engines.split(",")
    for e in args.engines:
        if e not in ENGINES:
            p.error("unknown engine '%s' (known: %s)" % (e, ",".join(ENGINES)))
        if args.precision == "bf16" and e not in ("ember", "ov"):
            p.error("--precision %s: engine '%s' has no such mode here "
                    "(use --engines ember,ov)" % (args.precision, e))
    _, default, known = SETS[args.set]
    args.models = args.models.split(",") if args.models else default
    for m in args.models:
        if m not in known:
            p.error("model '%s' is not in --set %s (known: %s)" %
                    (m, args.set, ",".join(known)))
    if args.mcpu == "native":
        args.mcpu = host_cpu()
    return args


def main():
    args = parse_args()
    work = os.path.abspath(args.work_dir or
                           os.path.join(args.build_dir, "bench"))
    os.makedirs(os.path.join(work, "ember"), exist_ok=True)
    threads = [int(t) for t in args.threads.split(",")]
    driver = os.path.join(work, "ember_driver")
    if "ember" in args.engines:
        run(["cc", "-O2", "-I", os.path.join(ROOT, "include"),
             os.path.join(LIB, "ember_driver.c"), "-o", driver, "-ldl"])
    peaks, args.peak_note = measured_peaks(args, work, threads)
    infos, flops, failures = {}, {}, {}
    for m in args.models:
        print("preparing %s ..." % m, flush=True)
        try:
            infos[m] = prepare(args, m, work)
        except Failed as e:  # no export: report and go on with the others
            failures[m] = e
            print("  %s: %s" % (e, e.detail), flush=True)
            continue
        try:
            flops[m] = report.model_flops(infos[m]["onnx"],
                                          infos[m]["npys"])
        except Exception as e:  # the GFLOP column is informative only
            print("  no FLOP count: %s" % e, flush=True)
    results = {}  # (model, engine, threads) -> [medians per round]
    for r in range(args.rounds):
        for m in infos:
            for t in threads:
                for e in args.engines:
                    key = (m, e, t)
                    if e in infos[m]["skip"] or key in failures:
                        continue
                    try:
                        ms, out = time_engine(args, e, infos[m], t, driver)
                    except Failed as ex:
                        failures[key] = ex
                        continue
                    results.setdefault(key, []).append(ms)
                    infos[m].setdefault("worker", {})[e] = out
        print("round %d of %d done" % (r + 1, args.rounds), flush=True)
    report.write(args, threads, infos, flops, peaks, results, failures)


def host_cpu():
    """The CPU name clang-19 picks for -march=native (e.g. znver5)."""
    r = subprocess.run(["clang-19", "-march=native", "-###", "-x", "c", "-",
                        "-c", "-o", "/dev/null"], input="",
                       capture_output=True, text=True)
    toks = r.stderr.replace('"', " ").split()
    if "-target-cpu" in toks:
        return toks[toks.index("-target-cpu") + 1]
    return "x86-64-v3"


if __name__ == "__main__":
    main()
