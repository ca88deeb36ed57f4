# The op table: the single source of truth for every node and instruction kind.
#
# utils/opgen.py turns this file into node classes with named accessors,
# Function builders, instruction classes, IRFunction builders and the OpInfo
# table used by the verifier, the printers and the IR generator.
#
# op(name, inputs, attrs, infer, rules, results, instr, doc)
#   inputs  - operand names; a leading '*' marks one variadic list (last).
#   attrs   - (Name, kind) with kind in int, float, ints, floats, string,
#             elemkind.
#   infer   - name of the C++ function infer<Infer> in lib/Graph/Infer*.cpp
#             that computes (and checks) the result types.
#   rules   - declarative checks run before inference: ("sameType", a, b),
#             ("rank", a, n), ("minRank", a, n), ("float", a), where a, b
#             name inputs.
#   results - result names (default: one result named Result).
#   instr   - whether an IR instruction of the same name exists; IRGen maps
#             such nodes one-to-one.

OPS = []


def op(name, inputs=(), attrs=(), infer="SameAsInput0", rules=(),
       results=("Result",), instr=True, doc=""):
    OPS.append(dict(name=name, inputs=list(inputs), attrs=list(attrs),
                    infer=infer, rules=list(rules), results=list(results),
                    instr=instr, doc=doc))


# Elementwise arithmetic on operands of one type (broadcasts are explicit).
for n in ["Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"]:
    op(n, ["LHS", "RHS"], rules=[("sameType", "LHS", "RHS")],
       doc="Elementwise %s of two tensors of the same type." % n)

for n in ["Relu", "Sigmoid", "Tanh", "Sqrt", "Exp", "Log", "Neg", "Abs"]:
    op(n, ["Input"], rules=[("float", "Input")],
       doc="Elementwise %s." % n)

op("Clip", ["Input"], [("Min", "float"), ("Max", "float")],
   rules=[("float", "Input")], doc="Clamps every element to [Min, Max].")

op("Splat", [], [("Dims", "ints"), ("ElemTy", "elemkind"), ("Value", "float")],
   infer="Splat", doc="A tensor of shape Dims filled with Value.")

op("MatMul", ["LHS", "RHS"], infer="MatMul",
   rules=[("minRank", "LHS", 2), ("float", "LHS")],
   doc="Matrix product over the last two dims; leading (batch) dims equal.")

op("Gemm", ["A", "B", "C"],
   [("Alpha", "float"), ("Beta", "float"), ("TransA", "int"), ("TransB", "int")],
   infer="Gemm", rules=[("rank", "A", 2), ("rank", "B", 2), ("float", "A")],
   doc="Alpha * op(A) * op(B) + Beta * C, with C already of the result shape.")

# Conv carries an optional fused epilogue: y = act(conv(x) + bias + residual)
# where Residual is zero or one tensor of the result type and act is given by
# FusedActivation (see FusedActivation in include/ember/Graph/Node.h) with
# parameters FusedAlpha/FusedBeta (Clip: min/max; LeakyRelu: alpha;
# HardSigmoid-style ops: alpha/beta).
op("Conv", ["Input", "Filter", "Bias", "*Residual"],
   [("Strides", "ints"), ("Pads", "ints"), ("Dilations", "ints"),
    ("Group", "int"), ("FusedActivation", "int"), ("FusedAlpha", "float"),
    ("FusedBeta", "float")],
   infer="Conv", rules=[("rank", "Input", 4), ("rank", "Filter", 4),
                        ("rank", "Bias", 1), ("float", "Input")],
   doc="2-D convolution, NCHW input, MCHW filter, fused epilogue. Pads: top, left, bottom, right.")

op("MaxPool", ["Input"],
   [("Kernel", "ints"), ("Strides", "ints"), ("Pads", "ints")],
   infer="Pool", rules=[("rank", "Input", 4)],
   doc="2-D max pooling over NCHW; padding never wins the max.")

op("AvgPool", ["Input"],
   [("Kernel", "ints"), ("Strides", "ints"), ("Pads", "ints"),
    ("CountIncludePad", "int")],
   infer="Pool", rules=[("rank", "Input", 4), ("float", "Input")],
   doc="2-D average pooling over NCHW.")

op("BatchNorm", ["Input", "Scale", "Bias", "Mean", "Var"],
   [("Epsilon", "float")], infer="BatchNorm",
   rules=[("minRank", "Input", 2), ("rank", "Scale", 1), ("float", "Input"),
          ("sameType", "Scale", "Bias"), ("sameType", "Scale", "Mean"),
          ("sameType", "Scale", "Var")],
   doc="Inference batch normalization over channel axis 1.")

op("Softmax", ["Input"], [("Axis", "int")], infer="Softmax",
   rules=[("float", "Input")], doc="Softmax along Axis.")

op("Transpose", ["Input"], [("Shuffle", "ints")], infer="Transpose",
   doc="Result dim i is input dim Shuffle[i].")

op("Reshape", ["Input"], [("Dims", "ints")], infer="Reshape", instr=False,
   doc="Same elements, new dims (a TensorView in the IR).")

op("Broadcast", ["Input"], [("Dims", "ints")], infer="Broadcast",
   doc="Repeats size-1 dims of Input (same rank) up to Dims.")

op("Concat", ["*Inputs"], [("Axis", "int")], infer="Concat",
   doc="Joins the inputs along Axis.")

op("Save", ["Input", "Output"], results=[], infer="Save", instr=False,
   rules=[("sameType", "Input", "Output")],
   doc="Writes Input into the Output placeholder (a copy in the IR).")

# --- Issue 4 (graph optimizer): nodes the passes create. ---
op("ChannelShuffle", ["Input"], [("Group", "int")], infer="ChannelShuffle",
   rules=[("minRank", "Input", 2)],
   doc="Splits axis 1 into Group x (C/Group) and transposes the two: out "
       "channel j*Group+i is input channel i*(C/Group)+j.")

# Minimal reductions for lowering Softmax and global pooling (issue 4). The
# ONNX reductions arrive with another issue; these follow ONNX semantics
# (Axes sorted, non-negative; KeepDims 0/1) so that they can merge with it.
for n in ["ReduceSum", "ReduceMax"]:
    op(n, ["Input"], [("Axes", "ints"), ("KeepDims", "int")], infer="Reduce",
       rules=[("float", "Input")],
       doc="%s over Axes; reduced dims are kept as 1 when KeepDims." % n)
