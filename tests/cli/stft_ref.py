"""STFT (opset 17) against numpy's FFT of the windowed frames (float64) on
the Interpreter and CPU backends: a real signal with a window (onesided),
with frame_length only (two-sided), and a complex signal (onnxruntime 1.19.2
gives NaN for a complex signal, so numpy is the oracle); within 1e-5 of the
largest |value| (float32 sums of frame-length products against a matrix of
float32 cosines and sines). A frame step fed at run time sets the result's
shape and must fail with one line."""
import os
import sys

import numpy as np
from onnx import helper as h

from newer_ops_harness import check_cases, check_one_line_errors, model

RNG = np.random.default_rng(9)


def reference(sig, step, window, length, onesided):
    """The STFT of `sig` by numpy: [batch, frames, bins, 2]."""
    z = sig[..., 0].astype(np.float64)
    if sig.shape[-1] == 2:
        z = z + 1j * sig[..., 1]
    n = len(window) if window is not None else length
    frames = (sig.shape[1] - n) // step + 1
    fr = np.stack([z[:, f * step:f * step + n] for f in range(frames)], 1)
    if window is not None:
        fr = fr * window
    spec = np.fft.fft(fr, axis=-1)
    if onesided:
        spec = spec[..., :n // 2 + 1]
    return np.stack([spec.real, spec.imag], -1)


def case(name, sig, step, window=None, length=None, **attrs):
    ins = ["s", "st", "w" if window is not None else "",
           "l" if length is not None else ""]
    while ins[-1] == "":
        ins.pop()
    consts = {"st": np.array(step, np.int64)}
    if window is not None:
        consts["w"] = window
    if length is not None:
        consts["l"] = np.array(length, np.int64)
    m = model([h.make_node("STFT", ins, ["y"], **attrs)], {"s": sig}, consts,
              17)
    want = reference(sig, step, window, length, attrs.get("onesided", 1))
    return name, m, {"s": sig}, [want]


def cases():
    f = np.float32
    hann = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(16) / 16)).astype(f)
    yield case("stft_window_onesided", RNG.standard_normal((2, 128, 1), f),
               8, window=hann)
    yield case("stft_length_twosided", RNG.standard_normal((1, 50, 1), f),
               7, length=12, onesided=0)
    yield case("stft_complex_window", RNG.standard_normal((2, 40, 2), f), 5,
               window=RNG.standard_normal(10, f), onesided=0)


def main():
    runner, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    fails = check_cases(runner, work, list(cases()), 24, any_float=True)
    sig = np.zeros((1, 32, 1), np.float32)
    bad = model([h.make_node("STFT", ["s", "st", "", "l"], ["y"])],
                {"s": sig, "st": np.array(4, np.int64)},
                {"l": np.array(8, np.int64)}, 17)
    fails += check_one_line_errors(runner, work, [
        ("stft_runtime_step", bad, "must be a constant")], 24)
    print("%d failure(s)" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
