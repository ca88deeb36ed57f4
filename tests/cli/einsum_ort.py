#!/usr/bin/env python3
"""Einsum against onnxruntime, through model-runner.

Usage: einsum_ort.py MODEL_RUNNER WORKDIR

Equations exporters write (attention scores and P.V in 4-D and MaxViT's 5-D
layout, a Linear, batch dims through '...'), and the general
ones (three operands, a letter only one operand has, diagonals, an outer
product, implicit outputs, float64), each run on the Interpreter and the
CPU and compared with onnxruntime: max|d| <= 1e-5 * max(1, max|ref|)
(float32 sums over K <= 64 terms in different orders). For the float
contractions the CPU's lowered graph (-dump-graph) must hold a MatMul and no
ReduceSum, and no MatMul operand may be a Broadcast, Tile or Transpose copy
(lib/Importer/ImportEinsum.cpp: each pair of operands is one MatMul).
"""
import re
import sys

import numpy as np
from onnx import TensorProto, helper

import matmul_forms_ort as mf


def einsum(name, eq, *arrays, want_matmul=True):
    names = ["x%d" % i for i in range(len(arrays))]
    kind = (TensorProto.DOUBLE if arrays[0].dtype == np.float64
            else TensorProto.FLOAT)
    m = mf.model(name, [helper.make_node("Einsum", names, ["y"],
                                         equation=eq)],
                 list(zip(names, arrays)), [("y", kind)])
    for vi, a in zip(m.graph.input, arrays):
        vi.type.tensor_type.elem_type = (TensorProto.DOUBLE
                                         if a.dtype == np.float64
                                         else TensorProto.FLOAT)
    return (name, m, dict(zip(names, arrays)), want_matmul)


def cases():
    r = mf.rand
    yield einsum("scores", "bhid,bhjd->bhij", r(2, 3, 10, 16), r(2, 3, 12, 16))
    yield einsum("attn_pv", "bhij,bhjd->bhid", r(2, 3, 10, 12), r(2, 3, 12, 16))
    yield einsum("maxvit_5d", "bghid,bghjd->bghij", r(1, 4, 2, 7, 8),
                 r(1, 4, 2, 9, 8))
    yield einsum("linear", "bsd,df->bsf", r(2, 5, 16), r(16, 24))
    yield einsum("ellipsis", "...ij,...jk->...ik", r(2, 3, 4, 5),
                 r(2, 3, 5, 6))
    yield einsum("three_operands", "ij,jk,kl->il", r(3, 4), r(4, 5), r(5, 6))
    # k is summed away before the product (a ReduceSum).
    yield einsum("summed_alone", "ijk,jl->il", r(3, 4, 5), r(4, 6),
                 want_matmul=False)
    yield einsum("outer", "i,j->ij", r(5), r(7))
    yield einsum("implicit", "ij,jk", r(3, 4), r(4, 5))
    yield einsum("transposed_out", "bij,bjk->kib", r(2, 3, 4), r(2, 4, 5))
    yield einsum("diagonal", "ii->i", r(4, 4), want_matmul=False)
    yield einsum("trace_implicit", "ii", r(5, 5), want_matmul=False)
    yield einsum("float64", "ij,jk->ik", mf.rand(3, 4).astype(np.float64),
                 mf.rand(4, 5).astype(np.float64), want_matmul=False)


def check_graph(name, text, want_matmul):
    why = mf.check_graph(name, text, False)
    if why or not want_matmul:
        return why
    if not re.search(r"= MatMul\(", text):
        return "%s: no MatMul in the CPU graph" % name
    if re.search(r"= ReduceSum\(", text):
        return "%s: a ReduceSum in the CPU graph" % name
    return None


if __name__ == "__main__":
    sys.exit(mf.check_all(sys.argv[1], sys.argv[2], cases(), check_graph))
