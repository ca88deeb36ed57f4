#!/usr/bin/env python3
"""Writes the hand-made conformance set 'tfidf' (TfIdfVectorizer beyond the
ONNX node tests' TF-only bigram cases: IDF and TFIDF with and without
weights, trigrams with skips, n-grams sharing an output column, a pool
with sizes outside [min_gram_length, max_gram_length], 1-D and 2-D int32
and int64 input) in the layout of the ONNX node tests, the outputs
computed by onnxruntime. Run with /work/main/.venv/bin/python from this
directory; the generated files are committed, so ctest needs neither.
"""
import os

import numpy as np
from onnx import TensorProto, helper

from handmade_io import vi, write_set

F, I32, I64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tfidf")
rng = np.random.default_rng(11)

# Pool: 3 unigrams, 3 bigrams, 2 trigrams (16 items).
POOL = [1, 2, 4,  1, 2, 2, 3, 0, 1,  1, 2, 3, 4, 4, 4]
COUNTS = [0, 3, 9]
GRAMS = 3 + 3 + 2


def case(name, elem, shape, mode, min_gram, max_gram, skip, indexes,
         weights=None, values=6):
    attrs = dict(mode=mode, min_gram_length=min_gram,
                 max_gram_length=max_gram, max_skip_count=skip,
                 ngram_counts=COUNTS, ngram_indexes=indexes,
                 pool_int64s=POOL)
    if weights is not None:
        attrs["weights"] = weights
    width = max(indexes) + 1
    out_shape = [shape[0], width] if len(shape) == 2 else [width]
    node = helper.make_node("TfIdfVectorizer", ["x"], ["y"], **attrs)
    g = helper.make_graph([node], "g", [vi("x", elem, shape)],
                          [vi("y", F, out_shape)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 9)])
    np_t = np.int32 if elem == I32 else np.int64
    sets = [[rng.integers(0, values, size=shape).astype(np_t)]
            for _ in range(2)]
    write_set(ROOT, name, m, sets)


identity = list(range(GRAMS))
# Columns permuted, two n-grams (a unigram and a trigram) in one column.
shared = [5, 0, 3, 1, 6, 2, 4, 3]
weights = [0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75, 4.0]

case("test_tfidf_tfidf_weights_skip2", I64, [3, 12], "TFIDF", 1, 3, 2,
     shared, weights)
case("test_tfidf_idf_weights_1d", I32, [20], "IDF", 1, 3, 1, shared,
     weights)
case("test_tfidf_idf_no_weights", I64, [2, 16], "IDF", 1, 2, 3, identity)
case("test_tfidf_tfidf_no_weights", I32, [2, 9], "TFIDF", 2, 3, 0,
     identity)
case("test_tfidf_tf_min2_skip4", I64, [4, 14], "TF", 2, 3, 4, identity,
     values=4)
case("test_tfidf_tf_trigrams_only", I32, [13], "TF", 3, 3, 2, identity,
     values=5)
