"""Run-time checks in CPU bundles (docs/Bundle.md "Return codes"): the
hand-made 'checks' models (tests/onnx/handmade/make_checks.py) compiled
with model-compiler and run by check_bundle.c through NAME and NAME_mt on
each data set: 0 where every check passes (the 'checks' set), the failed
check's number where one fails (the 'checks_fail' set), with its message,
one line naming the node, from NAME_CHECK_MESSAGES."""
import glob
import os
import subprocess
import sys

import onnx
from onnx import numpy_helper as nh

MODELS = ["test_check_slice", "test_check_loop_bound",
          "test_check_loop_slice", "test_check_nested_loop"]


def run_sets(exe, out, name, model, root, want_fail):
    """Runs every data set of root/name; the number of wrong verdicts."""
    fails = 0
    names = [i.name for i in model.graph.input]
    for ds in sorted(glob.glob(os.path.join(root, name, "test_data_set_*"))):
        args = [exe, os.path.join(out, "net.weights.bin")]
        for k, n in enumerate(names):
            t = onnx.TensorProto()
            t.ParseFromString(open(os.path.join(ds, "input_%d.pb" % k),
                                   "rb").read())
            path = os.path.join(out, "%s.bin" % n)
            nh.to_array(t).tofile(path)
            args.append(path)
        p = subprocess.run(args, stdout=subprocess.PIPE, text=True)
        lines = p.stdout.splitlines()
        ok = p.returncode == 0 and lines and (
            (lines[0] != "rc 0 rc_mt 0") == want_fail)
        if ok and want_fail:
            ok = len(lines) == 3 and all(
                l.startswith("run-time check failed: node '")
                for l in lines[1:])
        print("%s %s: exit %d, %s" % (name, os.path.basename(ds),
                                      p.returncode, " | ".join(lines)))
        fails += not ok
    return fails


def main():
    compiler, src, work = sys.argv[1:4]
    hand = os.path.join(src, "tests/onnx/handmade")
    fails = 0
    for name in MODELS:
        out = os.path.join(work, name)
        path = os.path.join(hand, "checks", name, "model.onnx")
        p = subprocess.run([compiler, "-model=" + path, "-backend=CPU",
                            "-emit-bundle=" + out, "-network-name=net"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        if p.returncode:
            print("%s: model-compiler: %s" % (name, p.stdout.strip()))
            fails += 1
            continue
        exe = os.path.join(out, "run")
        subprocess.run(["cc", "-std=c99", "-D_ISOC11_SOURCE", "-DNET=net",
                        "-include", os.path.join(out, "net.h"),
                        "-I", os.path.join(src, "tests/bundles"),
                        os.path.join(src, "tests/bundles/check_bundle.c"),
                        os.path.join(out, "net.o"), "-lm", "-lpthread",
                        "-o", exe], check=True)
        model = onnx.load(path)
        fails += run_sets(exe, out, name, model,
                          os.path.join(hand, "checks"), False)
        fails += run_sets(exe, out, name, model,
                          os.path.join(hand, "checks_fail"), True)
    print("%d failure(s)" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
