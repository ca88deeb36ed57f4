"""Writes the extremes sweep of ember-fuzz-model: for every ONNX node-test
model, hand-made model and model seed, one copy per integer or float
attribute (or element of an ints / floats attribute, up to four),
graph-input or graph-output dim (up to four per value), or element of a
small integer or float initializer or Constant value, with that one
number set to an
extreme: the int32 and int64 limits, -1, 0, 2^40; NaN, infinities, 1e30;
and one copy per graph input and element type it could be declared with
instead. The fuzzer's mutator reaches these at random; the sweep reaches each
of them every time.

Usage: extremes.py OUT_DIR MODEL_DIR...   (prints the number of files)
"""
import glob
import os
import sys

import onnx
from onnx import numpy_helper

INT_VALUES = [2**63 - 1, -2**63, 2**31 - 1, -2**31, -1, 0, 2**40, -2**40]
FLOAT_VALUES = [float('nan'), float('inf'), float('-inf'), 1e30, -1e30, 0.0]
DIM_VALUES = [0, 3, 2**31 - 1, 2**40, 2**63 - 1]
ELEM_TYPES = [onnx.TensorProto.BOOL, onnx.TensorProto.INT8,
              onnx.TensorProto.UINT8, onnx.TensorProto.INT32,
              onnx.TensorProto.INT64, onnx.TensorProto.UINT64,
              onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16,
              onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE]


class Writer:
    def __init__(self, out):
        self.out, self.count, self.seen = out, 0, set()

    def fresh(self, key):
        """False when an equal node / value was swept already."""
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def save(self, model, tag):
        name = '%s-%d.onnx' % (tag, self.count)
        with open(os.path.join(self.out, name), 'wb') as f:
            f.write(model.SerializeToString())
        self.count += 1


def copy(model):
    c = onnx.ModelProto()
    c.CopyFrom(model)
    return c


def sweep_attributes(w, m):
    for ni, node in enumerate(m.graph.node):
        attrs = tuple((a.name, a.i, tuple(a.ints), a.f, tuple(a.floats))
                      for a in node.attribute)
        for ai, a in enumerate(node.attribute):
            field = {onnx.AttributeProto.INT: 'i',
                     onnx.AttributeProto.INTS: 'ints',
                     onnx.AttributeProto.FLOAT: 'f',
                     onnx.AttributeProto.FLOATS: 'floats'}.get(a.type)
            if field is None:
                continue
            values = INT_VALUES if field in ('i', 'ints') else FLOAT_VALUES
            repeated = field in ('ints', 'floats')
            slots = range(min(len(getattr(a, field)), 4)) if repeated else [None]
            for s in slots:
                if not w.fresh(('attr', node.op_type, a.name, s, attrs)):
                    continue
                for v in values:
                    c = copy(m)
                    target = c.graph.node[ni].attribute[ai]
                    if s is None:
                        setattr(target, field, v)
                    else:
                        getattr(target, field)[s] = v
                    w.save(c, 'attr-%s-%s' % (node.op_type, a.name))


def sweep_dims(w, m, ops):
    """Graph-input dims, and the declared output and value_info dims that
    the importer reads as the sizes of data-dependent results (Unique,
    NonZero...) and of operands fed at run time."""
    for kind in ('input', 'output', 'value_info'):
        for ii, value in enumerate(getattr(m.graph, kind)):
            dims = value.type.tensor_type.shape.dim
            for di in range(min(len(dims), 4)):
                if not w.fresh(('dim', kind, ops, ii, di, len(dims))):
                    continue
                for v in DIM_VALUES:
                    c = copy(m)
                    target = getattr(c.graph, kind)[ii]
                    target.type.tensor_type.shape.dim[di].dim_value = v
                    w.save(c, 'dim-%s-%s' % (kind, ops))


def sweep_elem_types(w, m, ops):
    """Each graph input declared with each other element type."""
    for ii, inp in enumerate(m.graph.input):
        declared = inp.type.tensor_type.elem_type
        if not w.fresh(('type', ops, ii, declared)):
            continue
        for t in ELEM_TYPES:
            if t != declared:
                c = copy(m)
                c.graph.input[ii].type.tensor_type.elem_type = t
                w.save(c, 'type-' + ops)


def constant_tensors(graph):
    """(locator, tensor) of every initializer and Constant value."""
    for i, t in enumerate(graph.initializer):
        yield (lambda g, i=i: g.initializer[i]), t
    for ni, node in enumerate(graph.node):
        for ai, a in enumerate(node.attribute):
            if a.type == onnx.AttributeProto.TENSOR:
                yield (lambda g, ni=ni, ai=ai: g.node[ni].attribute[ai].t), a.t


def sweep_data(w, m, ops):
    """Integer and float32 constants of up to 8 elements."""
    int_types = (onnx.TensorProto.INT64, onnx.TensorProto.INT32)
    for locate, t in constant_tensors(m.graph):
        if t.data_type in int_types:
            values = INT_VALUES
        elif t.data_type == onnx.TensorProto.FLOAT:
            values = FLOAT_VALUES
        else:
            continue
        a = numpy_helper.to_array(t)
        if a.size == 0 or a.size > 8:
            continue
        if not w.fresh(('data', ops, t.data_type, a.shape,
                        tuple(a.flatten().tolist()))):
            continue
        for e in range(a.size):
            for v in values:
                if t.data_type == onnx.TensorProto.INT32:
                    v = max(min(v, 2**31 - 1), -2**31)
                c = copy(m)
                target = locate(c.graph)
                flat = a.copy().flatten()
                flat[e] = v
                target.CopyFrom(
                    numpy_helper.from_array(flat.reshape(a.shape), target.name))
                w.save(c, 'data-' + ops)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    files = []
    for d in sys.argv[2:]:
        files += sorted(glob.glob(os.path.join(d, '**', '*.onnx'),
                                  recursive=True))
    w = Writer(out)
    for f in files:
        try:
            m = onnx.load(f)
        except Exception:  # a file the seeds carry that is not a model
            continue
        ops = '_'.join(sorted({n.op_type for n in m.graph.node}))[:40]
        sweep_attributes(w, m)
        sweep_dims(w, m, ops)
        sweep_data(w, m, ops)
        sweep_elem_types(w, m, ops)
    print(w.count)


if __name__ == '__main__':
    main()
