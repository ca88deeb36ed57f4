"""The tables of scripts/bench and where they go in docs/Performance.md.

The cnn set owns everything above MARKER (rewritten by every cnn run);
the transformer set owns the block between T_BEGIN and T_END below it
(inserted after MARKER the first time, replaced by later transformer runs);
everything else below MARKER is hand-written and kept.
"""
import datetime
import importlib.metadata
import os
import statistics
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ENGINES = ["ember", "ort", "ov", "tvm", "torch"]
NAMES = {"ember": "Ember", "ort": "onnxruntime", "ov": "OpenVINO",
         "tvm": "TVM", "torch": "PyTorch"}
# The ISA extensions kernel choices depend on, as lscpu names them.
ISA = ["avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
       "avx512_bf16", "avx512_fp16", "avx_vnni", "amx_tile", "amx_bf16",
       "amx_int8"]
MARKER = ("<!-- Everything above is written by scripts/bench; everything "
          "below is kept. -->")
T_BEGIN = ("<!-- Transformer set: written by scripts/bench --set "
           "transformers; a rerun replaces everything up to the end "
           "marker. -->")
T_END = "<!-- End of the transformer set. -->"


def static_shapes(model):
    """Tensor name -> dims that ONNX shape inference resolves."""
    from onnx import shape_inference
    m = shape_inference.infer_shapes(model, data_prop=True)
    shapes = {}
    for vi in list(m.graph.value_info) + list(m.graph.input) + \
            list(m.graph.output):
        dims = [d.dim_value if d.HasField("dim_value") else None
                for d in vi.type.tensor_type.shape.dim]
        if vi.type.tensor_type.HasField("shape") and None not in dims:
            shapes[vi.name] = dims
    for init in m.graph.initializer:
        shapes[init.name] = list(init.dims)
    return shapes


def run_shapes(model, names, npys):
    """Shapes of NAMES from one onnxruntime run on the bench's inputs (for
    exports whose Reshape targets are computed, e.g. torchvision's Swin)."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    for n in names:
        model.graph.output.append(onnx.ValueInfoProto(name=n))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])
    feed = {i.name: np.load(p)
            for i, p in zip(sess.get_inputs(), npys.split(","))}
    outs = sess.run(None, feed)
    return {o.name: list(v.shape) for o, v in zip(sess.get_outputs(), outs)}


def model_flops(path, npys):
    """2 * multiply-accumulates of Conv, Gemm and MatMul."""
    import onnx
    model = onnx.load(path)
    ops = [n for n in model.graph.node
           if n.op_type in ("Conv", "Gemm", "MatMul")]
    shapes = static_shapes(model)
    unknown = {t for n in ops for t in (n.input[1], n.output[0])
               if t not in shapes}
    if unknown:
        shapes.update(run_shapes(model, sorted(unknown), npys))
    total = 0
    for n in ops:
        w, y = shapes[n.input[1]], shapes[n.output[0]]
        size = 1
        for d in y:
            size *= d
        if n.op_type == "Conv":  # OIHW: each output sums I*H*W products
            k = w[1] * w[2] * w[3]
        elif n.op_type == "Gemm" and any(a.name == "transB" and a.i
                                         for a in n.attribute):
            k = w[-1]
        else:
            k = w[-2]
        total += 2 * size * k
    return total


def cpu_info(mcpu):
    """'MODEL (clang -march=native: CPU), ISA: ...; absent: ...'."""
    fields = {}
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        k, _, v = line.partition(":")
        fields[k.strip()] = v.strip()
    flags = set(fields.get("Flags", "").split())
    has = [f for f in ISA if f in flags]
    lacks = [f for f in ISA if f not in flags]
    return "%s (family %s, model %s; clang -march=native: %s), %d cores; " \
        "ISA: %s%s" % (fields.get("Model name", "unknown CPU"),
                       fields.get("CPU family", "?"),
                       fields.get("Model", "?"), mcpu, os.cpu_count(),
                       " ".join(has) or "none of " + " ".join(ISA),
                       "; absent: " + " ".join(lacks) if lacks else "")


def ember_commit():
    git = ["git", "-C", ROOT]
    head = subprocess.run(git + ["rev-parse", "--short=10", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(git + ["status", "--porcelain", "--untracked-"
                                  "files=no"], capture_output=True,
                           text=True).stdout.strip()
    return (head or "unknown") + ("-dirty" if dirty else "")


def versions(engines):
    """Engine -> version, from the installed packages (the pins of
    scripts/requirements-bench.txt) and Debian's torch."""
    def pkg(name):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"
    v = {"ember": "commit " + ember_commit(), "ort": pkg("onnxruntime"),
         "ov": pkg("openvino"), "tvm": pkg("apache-tvm")}
    if "torch" in engines:
        v["torch"] = subprocess.run(
            ["/usr/bin/python3", "-c",
             "import torch; print(torch.__version__)"],
            capture_output=True, text=True).stdout.strip() or "unknown"
    return {e: v[e] for e in ENGINES if e in engines}


def header(args):
    """The line above every table: engine versions, Ember's commit, CPU."""
    v = versions(args.engines)
    return ("Engines: " + ", ".join("%s %s" % (NAMES[e], v[e]) for e in v) +
            " (onnx %s). CPU: %s." % (importlib.metadata.version("onnx"),
                                      cpu_info(args.mcpu)))


class Notes:
    """Numbered notes for cells that hold a failure instead of a time."""

    def __init__(self):
        self.items = []

    def cite(self, where, failure):
        text = "%s: %s%s" % (where, failure,
                             ": " + failure.detail if failure.detail else "")
        if text not in self.items:
            self.items.append(text)
        return "%s [%d]" % (failure, self.items.index(text) + 1)


def fmt_ms(vals):
    med = statistics.median(vals)
    spread = (max(vals) - min(vals)) / med * 100 if med else 0
    return "%.2f ±%.0f%%" % (med, spread / 2)


def table(args, t, infos, flops, peak, results, failures, notes):
    cols = ["%s ms" % NAMES[e] for e in ENGINES]
    lines = ["| model | GFLOP | " + " | ".join(cols) +
             " | Ember/ORT | Ember/OV | OV/ORT | TVM/ORT | PyTorch/ORT | "
             "Ember %s (%% of peak) |" % (
                 "GOP/s" if args.precision == "int8" else "GFLOP/s"),
             "|---" * (len(cols) + 8) + "|"]
    for m in args.models:
        if m in failures:
            cell = notes.cite(m, failures[m])
            lines.append("| %s |" % m + (" %s |" % cell) * (len(cols) + 7))
            continue
        med, cells = {}, []
        for e in ENGINES:
            vals = results.get((m, e, t))
            med[e] = statistics.median(vals) if vals else None
            why = infos[m]["skip"].get(e) or failures.get((m, e, t))
            cells.append(fmt_ms(vals) if vals else
                         notes.cite("%s / %s" % (m, NAMES[e]), why) if why
                         else "—")

        def ratio(a, b):
            return "%.2f" % (med[a] / med[b]) if med[a] and med[b] else "—"
        g = flops.get(m)
        eff = "—"
        if med["ember"] and g:
            gs = g / 1e9 / (med["ember"] / 1e3)
            eff = "%.1f (%.0f%%)" % (gs, gs / peak * 100)
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            m, "%.2f" % (g / 1e9) if g else "—", " | ".join(cells),
            ratio("ember", "ort"), ratio("ember", "ov"), ratio("ov", "ort"),
            ratio("tvm", "ort"), ratio("torch", "ort"), eff))
    return lines


def compile_table(args, infos, failures, notes):
    lines = ["| model | Ember | OpenVINO | TVM |", "|---|---|---|---|"]
    for m in args.models:
        if m not in infos:
            continue
        c, skip = infos[m]["compile_s"], infos[m]["skip"]
        ov = infos[m].get("worker", {}).get("ov", {}).get("compile_s")

        def cell(e, fmt):
            if e in c:
                return fmt % c[e]
            if e in skip:
                return notes.cite("%s / %s" % (m, NAMES[e]), skip[e])
            return "—"
        lines.append("| %s | %s | %s | %s |" % (
            m, cell("ember", "%.2f"), "%.2f" % ov if ov else "—",
            cell("tvm", "%.1f")))
    return lines


def setup_lines(args, infos):
    ov = {}
    for info in infos.values():
        ov = info.get("worker", {}).get("ov", {}).get("config") or ov
    lines = {
        "ember": "- Ember: CPU bundle from `model-compiler -backend=CPU "
        "-bundle-shared`, timed through the bundle ABI by "
        "scripts/benchlib/ember_driver.c (`NAME` at 1 thread, `NAME_mt` "
        "above).",
        "ort": "- onnxruntime: CPU provider, intra_op_num_threads = threads, "
        "sequential execution, all graph optimizations.",
        "ov": "- OpenVINO: CPU plugin, the ONNX file read by its ONNX "
        "frontend; "
        "INFERENCE_NUM_THREADS = threads; the compiled model reports %s." %
        (", ".join("%s=%s" % kv for kv in sorted(ov.items())
                   if kv[0] != "INFERENCE_NUM_THREADS") or
         "nothing (not run)"),
        "tvm": "- TVM: Relax ONNX frontend, `relax.build` default "
        "pipeline for {kind: llvm, mcpu: %s}, no tuning." % args.mcpu,
        "torch": "- PyTorch: Debian's torch, TorchScript traced and frozen, "
        "torch.set_num_threads(threads)."}
    return [lines[e] for e in ENGINES if e in args.engines] + [
        "- %s: %s." % (m, infos[m]["ov_note"]) for m in args.models
        if "ov_note" in infos.get(m, {})]


def section(args, threads, infos, flops, peaks, results, failures):
    """The Markdown of one run (cnn: a whole document head)."""
    h = "##" if args.set == "cnn" else "###"
    notes = Notes()
    lines = ["# Performance" if args.set == "cnn" else "## Transformer set",
             "",
             "Generated by `scripts/bench %s` on %s." % (
                 " ".join(sys.argv[1:]), datetime.date.today().isoformat()),
             "",
             "Each cell: median over %d interleaved rounds of each round's "
             "median (%d warm-up + %d timed runs in a fresh process; TVM %d "
             "timed runs), ± half the spread across rounds. Ratios divide "
             "the first engine's time by the second's at the same thread "
             "count (< 1: the first is faster). A cell with [n] did not "
             "run; note n says why." % (args.rounds, args.warmup, args.iters,
                                        args.tvm_iters), "",
             args.peak_note, ""]
    head = header(args)
    for t in threads:
        lines += ["%s %d thread%s" % (h, t, "s" if t > 1 else ""), "", head,
                  ""]
        lines += table(args, t, infos, flops, peaks[t], results, failures,
                       notes)
        lines.append("")
    lines += ["%s Compile time (seconds)" % h, "", head, ""]
    lines += compile_table(args, infos, failures, notes)
    lines += ["", "%s Setup" % h, ""] + setup_lines(args, infos)
    if notes.items:
        lines += ["", "%s Not measured" % h, ""]
        lines += ["%d. %s" % (i + 1, n) for i, n in enumerate(notes.items)]
    return lines


def store(path, model_set, lines):
    """Puts the section into docs/Performance.md (see the module doc)."""
    old = open(path).read() if os.path.exists(path) else ""
    text = "\n".join(lines) + "\n"
    if model_set == "cnn":
        kept = old[old.index(MARKER):] if MARKER in old else MARKER + "\n"
        new = text + "\n" + kept
    else:
        block = T_BEGIN + "\n\n" + text + "\n" + T_END
        if T_BEGIN in old and T_END in old:
            new = old[:old.index(T_BEGIN)] + block + \
                old[old.index(T_END) + len(T_END):]
        elif MARKER in old:
            at = old.index(MARKER) + len(MARKER)
            new = old[:at] + "\n\n" + block + "\n" + old[at:]
        else:
            new = old + ("\n" if old else "") + MARKER + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(new)


def write(args, threads, infos, flops, peaks, results, failures):
    lines = section(args, threads, infos, flops, peaks, results, failures)
    store(args.out, args.set, lines)
    print("\n".join(lines))
