"""What the hand-made conformance sets' generators share: value infos, and
writing a model with its data sets in the layout of the ONNX node tests
(the outputs computed by onnxruntime)."""
import os
import shutil

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, value):
    """A Constant node holding value."""
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(np.array(value)))


def model(nodes, inputs, outputs, opset=13, inits=(), value_info=()):
    """A one-graph model of the default domain at opset."""
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits),
                          value_info=list(value_info))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def write_set(root, name, m, data_sets):
    """Checks m, runs it in onnxruntime on each input list and writes the
    model and its data sets under root/name."""
    onnx.checker.check_model(m)
    d = os.path.join(root, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    onnx.save(m, os.path.join(d, "model.onnx"))
    sess = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"])
    in_names = [i.name for i in m.graph.input]
    out_names = [o.name for o in m.graph.output]
    for n, inputs in enumerate(data_sets):
        ds = os.path.join(d, "test_data_set_%d" % n)
        os.makedirs(ds)
        outs = sess.run(None, dict(zip(in_names, inputs)))
        for kind, names, arrays in (("input", in_names, inputs),
                                    ("output", out_names, outs)):
            for k, (nm, a) in enumerate(zip(names, arrays)):
                t = numpy_helper.from_array(a, nm)
                with open(os.path.join(ds, "%s_%d.pb" % (kind, k)),
                          "wb") as f:
                    f.write(t.SerializeToString())
