#!/usr/bin/env python3
"""Ops new past opset 17 against onnxruntime or a numpy reference.

Usage: newer_ops_ref.py MODEL_RUNNER WORKDIR

GroupNormalization (18: scale and bias per group; 21: per channel), the
Bitwise ops and CenterCropPad (18) are checked against onnxruntime (1.19
runs opsets up to 21); integer results must be equal. RMSNormalization,
RotaryEmbedding (23), Attention (23-25) and SwiGLU (28) are past its
opset: each is checked against a numpy reference written from the ONNX 1.23 operator
text, computed in float64 (the same models were compared by hand with
onnxruntime 1.32 and onnx 1.23's reference evaluator, docs/Architecture.md). Each model runs on the
Interpreter and the CPU; results must be within 1e-5 of the largest |y|
of the reference (float32 rounding of sums of at most 16 products, an exp
and a softmax normalization stays below 1e-6). Then malformed attributes
must each fail with one line naming the node and the attribute.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h

from newer_ops_harness import (ELEM, check_cases, check_one_line_errors,
                               model)

RNG = np.random.default_rng(23)


def x(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def group_norm(a, scale, bias, groups, eps):
    n, c = a.shape[:2]
    g = a.reshape(n, groups, -1).astype(np.float64)
    g = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True)
                                                  + eps)
    shape = [1, c] + [1] * (a.ndim - 2)
    return g.reshape(a.shape) * scale.reshape(shape) + bias.reshape(shape)


def rms_norm(a, scale, axis, eps):
    axes = tuple(range(axis % a.ndim, a.ndim))
    a = a.astype(np.float64)
    return a / np.sqrt((a * a).mean(axes, keepdims=True) + eps) * scale


def rotary(a, cos, sin, pos=None, interleaved=0, dim=0, heads=0):
    """The RotaryEmbedding operator text: heads as [B, S, H, D]."""
    shape = a.shape
    a = (a.transpose(0, 2, 1, 3) if a.ndim == 4 else
         a.reshape(shape[0], shape[1], heads, -1)).astype(np.float64)
    dim = dim or a.shape[3]
    if pos is not None:
        cos, sin = cos[pos], sin[pos]
    cos, sin = cos[:, :, None, :], sin[:, :, None, :]
    rot = a[..., :dim]
    x1, x2 = ((rot[..., 0::2], rot[..., 1::2]) if interleaved else
              (rot[..., :dim // 2], rot[..., dim // 2:]))
    real, imag = cos * x1 - sin * x2, sin * x1 + cos * x2
    if interleaved:
        rot = np.stack([real, imag], -1).reshape(rot.shape)
    else:
        rot = np.concatenate([real, imag], -1)
    y = np.concatenate([rot, a[..., dim:]], -1)
    return y.transpose(0, 2, 1, 3) if len(shape) == 4 else y.reshape(shape)


def attention(q, k, v, mask=None, past_k=None, past_v=None, scale=None,
              causal=0, softcap=0.0, qh=0, kvh=0, mode=0, left=-1, right=-1):
    """The Attention operator text (23-25): outputs Y, present K and V and
    qk_matmul_output."""
    three = q.ndim == 3

    def heads(t, n):
        return t.reshape(t.shape[0], t.shape[1], n, -1).transpose(0, 2, 1, 3)
    if three:
        q, k, v = heads(q, qh), heads(k, kvh), heads(v, kvh)
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    past = 0
    if past_k is not None:
        past = past_k.shape[2]
        k = np.concatenate([past_k, k], 2)
        v = np.concatenate([past_v, v], 2)
    present_k, present_v = k, v
    s_len, t_len = q.shape[2], k.shape[2]
    bias = np.zeros((s_len, t_len))
    if mask is not None:
        if mask.dtype == np.bool_:
            mask = np.where(mask, 0.0, -np.inf)
        pad = t_len - mask.shape[-1]
        mask = np.pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, pad)],
                      constant_values=-np.inf)
        bias = bias + mask
    i = np.arange(s_len)[:, None] + past
    j = np.arange(t_len)[None, :]
    hide = np.zeros((s_len, t_len), bool)
    if causal:
        hide |= j > i
    if left >= 0:
        hide |= i - j > left
    if right >= 0:
        hide |= j - i > right
    bias = bias + np.where(hide, -np.inf, 0.0)
    g = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, g, 1), np.repeat(v, g, 1)
    scale = scale if scale is not None else 1 / np.sqrt(q.shape[3])
    s = q @ k.transpose(0, 1, 3, 2) * scale
    stages = [s]
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    stages.append(s)
    s = s + bias
    stages.append(s)
    # A row that sees no key (all -inf) has weights 0, so Y 0.
    mx = s.max(-1, keepdims=True)
    empty = np.isneginf(mx)
    p = np.exp(s - np.where(empty, 0.0, mx))
    p = p / np.where(empty, 1.0, p.sum(-1, keepdims=True))
    stages.append(p)
    y = p @ v
    if three:
        y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], y.shape[2], -1)
    return [y, present_k, present_v, stages[mode]]


def gn_case(name, opset, a, groups, per, eps):
    sc, bi = x(per), x(per)
    node = h.make_node("GroupNormalization", ["a", "s", "b"], ["y"],
                       num_groups=groups, epsilon=eps)
    return (name, model([node], {"a": a}, {"s": sc, "b": bi}, opset),
            {"a": a}, None)


def ref_cases():
    a = x(2, 5, 16)
    sc = x(16)
    yield ("rmsnorm_last_23", model(
        [h.make_node("RMSNormalization", ["a", "s"], ["y"])], {"a": a},
        {"s": sc}, 23), {"a": a}, [rms_norm(a, sc, -1, 1e-5)])
    b = x(2, 3, 4, 5)
    sb = x(1, 5)
    yield ("rmsnorm_axis1_23", model(
        [h.make_node("RMSNormalization", ["b", "s"], ["y"], axis=1,
                     epsilon=1e-2)], {"b": b}, {"s": sb}, 23), {"b": b},
        [rms_norm(b, sb, 1, 1e-2)])
    r4 = x(2, 3, 5, 8)
    c4, s4 = x(2, 5, 4), x(2, 5, 4)
    yield ("rotary_4d_23", model(
        [h.make_node("RotaryEmbedding", ["r", "c", "s"], ["y"])], {"r": r4},
        {"c": c4, "s": s4}, 23), {"r": r4}, [rotary(r4, c4, s4)])
    r3 = x(2, 5, 16)
    c3, s3 = x(10, 2), x(10, 2)
    pos = RNG.integers(0, 10, (2, 5)).astype(np.int64)
    yield ("rotary_3d_pos_interleaved_partial_23", model(
        [h.make_node("RotaryEmbedding", ["r", "c", "s", "p"], ["y"],
                     interleaved=1, rotary_embedding_dim=4, num_heads=2)],
        {"r": r3, "p": pos}, {"c": c3, "s": s3}, 23),
        {"r": r3, "p": pos},
        [rotary(r3, c3, s3, pos, interleaved=1, dim=4, heads=2)])
    q, k, v = x(2, 4, 6, 8), x(2, 4, 7, 8), x(2, 4, 7, 5)
    yield ("attention_4d_mha_23", model(
        [h.make_node("Attention", ["q", "k", "v"], ["y", "", "", "qk"])],
        {"q": q, "k": k, "v": v}, {}, 23, ("y", "qk")),
        {"q": q, "k": k, "v": v}, attention(q, k, v)[0::3])
    q3, k3, v3 = x(2, 6, 32), x(2, 6, 16), x(2, 6, 12)
    m = RNG.random((6, 6)) < 0.7
    m[:, 0] = True
    yield ("attention_3d_gqa_causal_bool_23", model(
        [h.make_node("Attention", ["q", "k", "v", "m"], ["y", "", "", "qk"],
                     q_num_heads=4, kv_num_heads=2, is_causal=1,
                     qk_matmul_output_mode=3)],
        {"q": q3, "k": k3, "v": v3, "m": m}, {}, 23, ("y", "qk")),
        {"q": q3, "k": k3, "v": v3, "m": m},
        attention(q3, k3, v3, m, causal=1, qh=4, kvh=2, mode=3)[0::3])
    q, k, v = x(1, 4, 3, 8), x(1, 2, 3, 8), x(1, 2, 3, 8)
    pk, pv = x(1, 2, 4, 8), x(1, 2, 4, 8)
    fm = x(1, 1, 3, 7)
    yield ("attention_past_softcap_mask_24", model(
        [h.make_node("Attention", ["q", "k", "v", "m", "pk", "pv"],
                     ["y", "ok", "ov", "qk"], is_causal=1, softcap=2.0,
                     scale=0.3, qk_matmul_output_mode=2)],
        {"q": q, "k": k, "v": v, "m": fm, "pk": pk, "pv": pv}, {}, 24,
        ("y", "ok", "ov", "qk")),
        {"q": q, "k": k, "v": v, "m": fm, "pk": pk, "pv": pv},
        attention(q, k, v, fm, pk, pv, scale=0.3, causal=1, softcap=2.0,
                  mode=2))
    ga, gb = x(2, 3, 8), x(2, 3, 8)
    yield ("swiglu_28", model(
        [h.make_node("SwiGLU", ["a", "b"], ["y"], alpha=1.5)],
        {"a": ga, "b": gb}, {}, 28), {"a": ga, "b": gb},
        [ga / (1 + np.exp(-1.5 * ga.astype(np.float64))) * gb])
    q, k, v = x(1, 2, 4, 8), x(1, 2, 6, 8), x(1, 2, 6, 8)
    yield ("attention_softcap_mode1_23", model(
        [h.make_node("Attention", ["q", "k", "v"], ["y", "", "", "qk"],
                     softcap=0.5, qk_matmul_output_mode=1)],
        {"q": q, "k": k, "v": v}, {}, 23, ("y", "qk")),
        {"q": q, "k": k, "v": v},
        attention(q, k, v, softcap=0.5, mode=1)[0::3])
    q, k, v = x(1, 2, 3, 4), x(1, 2, 5, 4), x(1, 2, 5, 4)
    bm = np.array([[True, False, True]])
    yield ("attention_short_bool_mask_23", model(
        [h.make_node("Attention", ["q", "k", "v", "m"], ["y"])],
        {"q": q, "k": k, "v": v, "m": bm}, {}, 23),
        {"q": q, "k": k, "v": v, "m": bm}, attention(q, k, v, bm)[:1])
    q, k, v = x(2, 3, 4, 8), x(2, 3, 6, 8), x(2, 3, 6, 8)
    rm = RNG.random((2, 1, 4, 6)) < 0.6
    rm[0, 0, 1] = False
    rm[1, 0, 3] = False
    yield ("attention_bool_mask_empty_rows_23", model(
        [h.make_node("Attention", ["q", "k", "v", "m"], ["y"])],
        {"q": q, "k": k, "v": v, "m": rm}, {}, 23),
        {"q": q, "k": k, "v": v, "m": rm}, attention(q, k, v, rm)[:1])
    q3, k3, v3 = x(1, 5, 16), x(1, 5, 8), x(1, 5, 8)
    am = x(5, 5)
    am[2] = -np.inf
    yield ("attention_3d_additive_empty_row_mode3_23", model(
        [h.make_node("Attention", ["q", "k", "v", "m"], ["y", "", "", "qk"],
                     q_num_heads=2, kv_num_heads=1, qk_matmul_output_mode=3)],
        {"q": q3, "k": k3, "v": v3, "m": am}, {}, 23, ("y", "qk")),
        {"q": q3, "k": k3, "v": v3, "m": am},
        attention(q3, k3, v3, am, qh=2, kvh=1, mode=3)[0::3])
    q, k, v = x(1, 2, 6, 4), x(1, 2, 4, 4), x(1, 2, 4, 4)
    yield ("attention_window_long_query_25", model(
        [h.make_node("Attention", ["q", "k", "v"], ["y"], is_causal=1,
                     right_window_size=0, left_window_size=0)],
        {"q": q, "k": k, "v": v}, {}, 25),
        {"q": q, "k": k, "v": v},
        attention(q, k, v, causal=1, left=0, right=0)[:1])
    q, k, v = x(1, 2, 7, 4), x(1, 2, 7, 4), x(1, 2, 7, 4)
    yield ("attention_window_25", model(
        [h.make_node("Attention", ["q", "k", "v"], ["y"], is_causal=1,
                     left_window_size=2)],
        {"q": q, "k": k, "v": v}, {}, 25),
        {"q": q, "k": k, "v": v}, attention(q, k, v, causal=1, left=2)[:1])


def ints(dtype, *shape):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, shape, dtype=dtype,
                        endpoint=True)


def ort_cases():
    yield gn_case("groupnorm_per_group_18", 18, x(2, 6, 5, 4), 3, 3, 1e-5)
    yield gn_case("groupnorm_per_channel_21", 21, x(2, 6, 7), 2, 6, 1e-3)
    for op, dtype in [("BitwiseAnd", np.int32), ("BitwiseOr", np.uint8),
                      ("BitwiseXor", np.int64), ("BitwiseAnd", np.uint64)]:
        a, b = ints(dtype, 3, 4), ints(dtype, 4)
        yield ("%s_%s_18" % (op.lower(), np.dtype(dtype).name), model(
            [h.make_node(op, ["a", "b"], ["y"])], {"a": a, "b": b}, {}, 18,
            out_type=ELEM[np.dtype(dtype)]), {"a": a, "b": b}, None)
    for dtype in [np.int8, np.uint16, np.uint64]:
        a = ints(dtype, 2, 5)
        yield ("bitwisenot_%s_18" % np.dtype(dtype).name, model(
            [h.make_node("BitwiseNot", ["a"], ["y"])], {"a": a}, {}, 18,
            out_type=ELEM[np.dtype(dtype)]), {"a": a}, None)
    c = x(2, 5, 7)
    yield ("centercroppad_axes_18", model(
        [h.make_node("CenterCropPad", ["c", "s"], ["y"], axes=[-2, 2])],
        {"c": c}, {"s": np.array([2, 10], np.int64)}, 18), {"c": c}, None)
    for name, cols, attrs, consts in [
            ("col2im_18", x(1, 8, 16), {},
             {"i": [5, 5], "b": [2, 2]}),
            ("col2im_strided_dilated_padded_18", x(2, 18, 12),
             {"strides": [2, 1], "dilations": [1, 2], "pads": [1, 0, 0, 1]},
             {"i": [6, 7], "b": [2, 3]})]:
        yield (name, model(
            [h.make_node("Col2Im", ["c", "i", "b"], ["y"], **attrs)],
            {"c": cols}, {n: np.array(v, np.int64) for n, v in
                          consts.items()}, 18), {"c": cols}, None)
    d = ints(np.int32, 4, 3)
    yield ("centercroppad_all_18", model(
        [h.make_node("CenterCropPad", ["d", "s"], ["y"])], {"d": d},
        {"s": np.array([3, 6], np.int64)}, 18, out_type=T.INT32), {"d": d},
        None)


def check_errors(runner, work):
    q, k = x(1, 2, 3, 4), x(1, 2, 3, 4)
    qkv = {"q": q, "k": k, "v": k}
    bad = [
        ("attention_softmax_precision", model(
            [h.make_node("Attention", ["q", "k", "v"], ["y"],
                         softmax_precision=T.FLOAT16)], qkv, {}, 23),
         "softmax_precision 10"),
        ("attention_nonpad", model(
            [h.make_node("Attention", ["q", "k", "v", "", "", "", "n"],
                         ["y"])], qkv, {"n": np.array([3], np.int64)}, 24),
         "nonpad_kv_seqlen"),
        ("attention_3d_no_heads", model(
            [h.make_node("Attention", ["q", "k", "v"], ["y"])],
            {"q": x(1, 3, 8), "k": x(1, 3, 8), "v": x(1, 3, 8)}, {}, 23),
         "q_num_heads and kv_num_heads"),
        ("groupnorm_groups", model(
            [h.make_node("GroupNormalization", ["a", "s", "b"], ["y"],
                         num_groups=4)], {"a": x(1, 6, 3)},
            {"s": x(6), "b": x(6)}, 21), "num_groups 4"),
        ("groupnorm_stash_type", model(
            [h.make_node("GroupNormalization", ["a", "s", "b"], ["y"],
                         num_groups=2, stash_type=T.FLOAT16)],
            {"a": x(1, 6, 3)}, {"s": x(6), "b": x(6)}, 21),
         "stash_type 10 is neither float"),
        ("rotary_odd_dim", model(
            [h.make_node("RotaryEmbedding", ["r", "c", "s"], ["y"],
                         rotary_embedding_dim=3)], {"r": x(1, 2, 3, 4)},
            {"c": x(1, 3, 1), "s": x(1, 3, 1)}, 23),
         "rotary_embedding_dim 3"),
        ("centercroppad_axes", model(
            [h.make_node("CenterCropPad", ["a", "s"], ["y"], axes=[0, 1])],
            {"a": x(2, 3)}, {"s": np.array([2], np.int64)}, 18),
         "shape has 1 values for 2 axes"),
        ("col2im_columns", model(
            [h.make_node("Col2Im", ["c", "i", "b"], ["y"])],
            {"c": x(1, 8, 17)}, {"i": np.array([5, 5], np.int64),
                                 "b": np.array([2, 2], np.int64)}, 18),
         "is not [N, C * 4, 16]"),
    ]
    return check_one_line_errors(runner, work, bad, 38)


def main():
    runner, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    fails = 0
    cases = list(ref_cases())
    if "--ref-only" not in sys.argv:
        import onnxruntime as ort
        ort.set_default_logger_severity(3)
        for name, m, feeds, _ in ort_cases():
            path = os.path.join(work, name + ".onnx")
            onnx.save(m, path)
            want = ort.InferenceSession(
                path, providers=["CPUExecutionProvider"]).run(None, feeds)
            cases.append((name, m, feeds, want))
    fails += check_cases(runner, work, cases, 38, any_float=True)
    fails += check_errors(runner, work)
    print("%d failure(s)" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
