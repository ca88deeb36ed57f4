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
#   elementwise - result element i depends only on element i of every input
#             (all of the result's shape): the IR passes may compute it in
#             place and the kernel lowering fuses it into one loop.
#   formula - for an elementwise float op, its value as an expression over
#             the inputs (x, y, z), attributes (lower-case names) and the
#             functions of utils/formula.py. It is the op's only definition:
#             the kernel lowering (CPU, CUDA), the Interpreter (in double) and
#             the support tables are generated from it.

OPS = []


def op(name, inputs=(), attrs=(), infer="SameAsInput0", rules=(),
       results=("Result",), instr=True, elementwise=False, doc="",
       formula=None):
    OPS.append(dict(name=name, inputs=list(inputs), attrs=list(attrs),
                    infer=infer, rules=list(rules), results=list(results),
                    instr=instr, elementwise=elementwise or bool(formula),
                    doc=doc, formula=formula))


# Elementwise arithmetic on operands of one type (broadcasts are explicit).
for n in ["Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"]:
    op(n, ["LHS", "RHS"], rules=[("sameType", "LHS", "RHS")], elementwise=True,
       doc="Elementwise %s of two tensors of the same type." % n)

for n in ["Relu", "Sigmoid", "Tanh", "Sqrt", "Exp", "Log", "Neg", "Abs"]:
    op(n, ["Input"], rules=[("float", "Input")], elementwise=True,
       doc="Elementwise %s." % n)

op("Clip", ["Input"], [("Min", "float"), ("Max", "float")],
   rules=[("float", "Input")], elementwise=True, doc="Clamps every element to [Min, Max].")

op("Splat", [], [("Dims", "ints"), ("ElemTy", "elemkind"), ("Value", "float")],
   infer="Splat", elementwise=True, doc="A tensor of shape Dims filled with Value.")

# MatMul reads broadcast batch dims and a transposed RHS in place, so neither
# is ever copied; a backend that cannot lowers them (lowerMatMulOperands).
# Like Conv, MatMul carries an optional fused epilogue (fuse-matmul-epilogue):
# y = act(LHS * RHS + bias + residual), act given by FusedActivation with
# FusedAlpha/FusedBeta. Epilogue holds at most a bias [N] (rank 1, first)
# and a residual of the result type; a backend's kernel applies them to the
# accumulators before it stores them.
op("MatMul", ["LHS", "RHS", "*Epilogue"],
   [("TransB", "int"), ("FusedActivation", "int"), ("FusedAlpha", "float"),
    ("FusedBeta", "float")], infer="MatMul",
   rules=[("minRank", "LHS", 2), ("float", "LHS")],
   doc="Matrix product over the last two dims: LHS [..., M, K] times RHS "
       "[..., K, N] ([..., N, K] when TransB); same rank, each batch dim "
       "equal or 1 on one side (broadcast). BFloat16 operands give a "
       "Float32 result. Epilogue: optional bias [N] and residual of the "
       "result type, then FusedActivation.")

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
   doc="2-D convolution, NCHW input, MCHW filter, fused epilogue. Pads: top, left, bottom, right. "
       "A BFloat16 filter on a Float32 input reads the input rounded to BFloat16 and sums in Float32.")

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

# A loop with a run-time trip count (docs/ControlFlow.md "Loops kept as
# loops"): the body's nodes sit in the one graph between LoopBegin and
# LoopEnd, which the scheduler keeps contiguous; IRGen emits them as
# markers the backends turn into a jump. Carried values live in LoopCarry
# buffers across iterations; the body reads them through LoopParam (which
# ties its nodes to LoopBegin) and code after the loop through LoopFinal
# (which ties it to LoopEnd). None of them folds or merges (isLoopOp).
op("LoopCarry", ["Input"], infer="SameAsInput0",
   doc="A fresh buffer holding Input, carried across a loop's iterations.")
op("LoopBegin", ["TripCount", "Cond", "*Carried"], infer="LoopBegin",
   results=["Counter"],
   doc="Starts a loop: Counter (Int64 [1]) = 0, then the test of the "
       "matching LoopEnd. TripCount is Int64 [1], Cond the Bool [1] "
       "LoopCarry of the condition; Carried lists the loop's other LoopCarry "
       "buffers so that they exist before it.")
op("LoopParam", ["Counter", "State"], infer="LoopParam",
   doc="A copy of the carried State in the body of the loop of Counter.")
op("LoopEnd", ["Counter", "*Operands"], [("NumCarried", "int"),
   ("MaxTrips", "int")], infer="LoopEnd", results=["Count"],
   doc="Ends an iteration. Operands: the condition's LoopCarry, its next "
       "value, NumCarried carried LoopCarry buffers, their next values, "
       "then the scan buffers ([bound, ...] LoopCarry) and the values for "
       "their row Counter. Copies each next value into its buffer, writes "
       "the scan rows, increments Counter and jumps back after LoopBegin "
       "while Counter < TripCount, the condition holds and Counter < "
       "MaxTrips (-1: no bound); then Count = Counter.")
op("LoopFinal", ["Count", "State"], infer="LoopParam",
   doc="A copy of the carried State after the loop that gave Count.")

# --- Graph optimizer: nodes the passes create. ---
op("ChannelShuffle", ["Input"], [("Group", "int")], infer="ChannelShuffle",
   rules=[("minRank", "Input", 2)],
   doc="Splits axis 1 into Group x (C/Group) and transposes the two: out "
       "channel j*Group+i is input channel i*(C/Group)+j.")


# --- ONNX import at full breadth --------------------------------------------
# Unless a doc says otherwise these ops follow the ONNX operator of the same
# name on static shapes, with the importer doing every broadcast, axis
# normalization and constant-input decoding, so attributes here are always
# explicit and non-negative. Kernels may compute in double.

for n in ["Erf", "Floor", "Ceil", "Round", "Reciprocal", "Sin", "Cos", "Tan",
          "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"]:
    op(n, ["Input"], rules=[("float", "Input")], elementwise=True,
       doc="Elementwise %s (Round: halves to even)." % n)

# Ops defined by a formula alone (see `formula` above). Past 30, log(1+e^x)
# is x to float precision and e^x would overflow soon after.
op("Softplus", ["Input"], rules=[("float", "Input")],
   formula="x if x > 30 else log1p(exp(x))", doc="log(1 + e^x).")
op("Softsign", ["Input"], rules=[("float", "Input")],
   formula="x / (1 + abs(x))", doc="x / (1 + |x|).")
op("Mish", ["Input"], rules=[("float", "Input")],
   formula="x * tanh(x if x > 30 else log1p(exp(x)))",
   doc="x * tanh(softplus(x)).")

# Made by the gelu-fusion pass from the erf or tanh pattern exporters write.
op("Gelu", ["Input"], [("Approximate", "int")], rules=[("float", "Input")],
   elementwise=True,
   doc="x * Phi(x). Approximate=0: x/2 * (1 + erf(x / sqrt 2)); "
       "Approximate=1: x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))).")

op("Sign", ["Input"], elementwise=True, doc="Elementwise sign (-1, 0, 1) of any numeric kind.")

op("Mod", ["LHS", "RHS"], [("Fmod", "int")],
   rules=[("sameType", "LHS", "RHS")], elementwise=True,
   doc="Remainder. Fmod=0: sign of the divisor (integers only); Fmod=1: "
       "sign of the dividend (C fmod).")

op("BitShift", ["LHS", "RHS"], [("Left", "int")],
   rules=[("sameType", "LHS", "RHS")], elementwise=True,
   doc="Shifts unsigned integers left (Left=1) or right by RHS bits; "
       "shifts of the bit width or more give 0.")

for n in ["Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"]:
    op(n, ["LHS", "RHS"], infer="Compare", rules=[("sameType", "LHS", "RHS")],
       elementwise=True,
       doc="Elementwise comparison; the result is Bool of the operand shape.")

for n in ["And", "Or", "Xor"]:
    op(n, ["LHS", "RHS"], infer="Logical", rules=[("sameType", "LHS", "RHS")],
       elementwise=True,
       doc="Elementwise %s of two tensors of one type: logical on Bool, "
           "bitwise on integers." % n.lower())

op("Not", ["Input"], infer="Logical", elementwise=True,
   doc="Elementwise not: logical on Bool, bitwise on integers.")

op("IsNaN", ["Input"], infer="Classify", rules=[("float", "Input")],
   elementwise=True,
   doc="Bool: the element is NaN.")

op("IsInf", ["Input"], [("DetectPositive", "int"), ("DetectNegative", "int")],
   infer="Classify", rules=[("float", "Input")], elementwise=True,
   doc="Bool: the element is +inf (if DetectPositive) or -inf (if "
       "DetectNegative).")

op("Where", ["Cond", "LHS", "RHS"], infer="Where",
   rules=[("sameType", "LHS", "RHS")], elementwise=True,
   doc="Cond ? LHS : RHS elementwise; Cond is Bool of the same shape.")

op("Cast", ["Input"], [("ElemTy", "elemkind")], infer="Cast",
   elementwise=True,
   doc="Converts every element to ElemTy (float to int truncates toward "
       "zero; to Bool is x != 0).")

# Reductions over a sorted, duplicate-free axis list. KeepDims=0 drops the
# reduced axes. An empty Axes list is the identity.
for n in ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceMean"]:
    op(n, ["Input"], [("Axes", "ints"), ("KeepDims", "int")], infer="Reduce",
       doc="%s over Axes." % n[6:])

op("ArgMax", ["Input"],
   [("Axis", "int"), ("KeepDims", "int"), ("SelectLastIndex", "int")],
   infer="ArgReduce",
   doc="Int64 index of the largest element along Axis (first one, or the "
       "last one if SelectLastIndex).")
op("ArgMin", ["Input"],
   [("Axis", "int"), ("KeepDims", "int"), ("SelectLastIndex", "int")],
   infer="ArgReduce", doc="Like ArgMax, for the smallest element.")

op("Gather", ["Data", "Indices"], [("Axis", "int")], infer="Gather",
   doc="Result dims: Data[:Axis] + Indices + Data[Axis+1:]. Indices are "
       "int32/int64; negative ones count from the end; out of range gives 0.")

op("GatherElements", ["Data", "Indices"], [("Axis", "int")],
   infer="GatherElements",
   doc="Result[i] = Data[i with coordinate Axis replaced by Indices[i]]; "
       "Indices has the rank of Data.")

op("GatherND", ["Data", "Indices"], [("BatchDims", "int")], infer="GatherND",
   doc="ONNX GatherND: the last dim of Indices indexes leading dims of Data "
       "after BatchDims shared batch dims.")

op("ScatterElements", ["Data", "Indices", "Updates"],
   [("Axis", "int"), ("Reduction", "int")], infer="ScatterElements",
   doc="Copy of Data with Updates written at GatherElements positions. "
       "Reduction: 0 none, 1 add, 2 mul, 3 max, 4 min.")

op("ScatterND", ["Data", "Indices", "Updates"], [("Reduction", "int")],
   infer="ScatterND",
   doc="Copy of Data with Updates written at GatherND positions (Reduction "
       "as ScatterElements).")

op("Slice", ["Input"], [("Starts", "ints"), ("Steps", "ints"), ("Dims", "ints")],
   infer="Slice",
   doc="Result[i] = Input[Starts + i * Steps] per dim; Dims is the result "
       "shape; Steps may be negative.")

op("Pad", ["Input"], [("Pads", "ints"), ("Mode", "int"), ("Value", "float")],
   infer="Pad",
   doc="Pads: all begins then all ends (non-negative). Mode: 0 constant "
       "Value, 1 reflect, 2 edge.")

op("Tile", ["Input"], [("Repeats", "ints")], infer="Tile",
   doc="Repeats the input Repeats[i] times along dim i.")

op("TopK", ["Input"], [("K", "int"), ("Axis", "int"), ("Largest", "int")],
   infer="TopK", results=["Values", "Indices"],
   doc="The K largest (Largest=1) or smallest elements along Axis, sorted, "
       "ties broken by the lower index; Indices are Int64.")

# Greedy non-maximum suppression in one instruction (ImportNMS.cpp builds
# its operands): O(boxes x kept) box tests, no size limit but memory.
op("NMSKeep", ["Candidates", "Corners", "IoUThreshold", "MaxOut"],
   infer="NMSKeep", results=["Keep", "Slots"],
   rules=[("float", "Candidates")],
   doc="Per row r of Candidates [R, B] (boxes in score order, 1 where a "
       "box may be selected) and Corners [R, B, 4] (x min, y min, x max, "
       "y max), Keep [R, B] is 1 where the box is selected: a candidate that "
       "no earlier selected box overlaps with IoU > IoUThreshold [1], while "
       "fewer than MaxOut [1] are selected (ONNX NonMaxSuppression's test, "
       "in Float32). Slots [R, B] (Int64) holds the selected boxes' "
       "positions, first to last, as scratch.")

op("CumSum", ["Input"], [("Axis", "int"), ("Exclusive", "int"),
                         ("Reverse", "int")],
   doc="Running sum along Axis, optionally exclusive and/or reversed.")

op("Resize", ["Input"],
   [("Dims", "ints"), ("Scales", "floats"), ("Mode", "int"),
    ("CoordMode", "int"), ("NearestMode", "int"), ("CubicCoeff", "float"),
    ("ExcludeOutside", "int"), ("ExtrapolationValue", "float")],
   infer="Resize", rules=[("float", "Input")],
   doc="ONNX Resize to Dims with per-dim Scales. Mode: 0 nearest, 1 linear, "
       "2 cubic. CoordMode: 0 half_pixel, 1 asymmetric, 2 pytorch_half_pixel, "
       "3 align_corners, 4 tf_crop_and_resize (unsupported). NearestMode: 0 "
       "round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil.")

op("PoolND", ["Input"],
   [("Kernel", "ints"), ("Strides", "ints"), ("Pads", "ints"),
    ("Dilations", "ints"), ("IsAvg", "int"), ("CountIncludePad", "int")],
   infer="PoolND",
   doc="Max (IsAvg=0, any kind) or average (float) pooling over every dim after N, C (any "
       "number of spatial dims, dilations allowed). Pads: all begins then "
       "all ends.")

op("ConvTranspose", ["Input", "Filter", "Bias"],
   [("Strides", "ints"), ("Pads", "ints"), ("Dilations", "ints"),
    ("Group", "int"), ("Dims", "ints")],
   infer="ConvTranspose", rules=[("float", "Input")],
   doc="Transposed convolution over any number of spatial dims; Filter is "
       "[C, M/Group, k...]; Pads: begins then ends; Dims is the result "
       "shape (output_padding and output_shape resolved by the importer).")

# --- Graph optimizer: the layout pass's channels-last Conv. ---
op("ConvNHWC", ["Input", "Filter", "Bias", "*Residual"],
   [("Strides", "ints"), ("Pads", "ints"), ("Dilations", "ints"),
    ("Group", "int"), ("FusedActivation", "int"), ("FusedAlpha", "float"),
    ("FusedBeta", "float")],
   infer="ConvNHWC", rules=[("rank", "Input", 4), ("rank", "Filter", 4),
                            ("rank", "Bias", 1), ("float", "Input")],
   doc="Conv with channels last: NHWC input and result, filter [M, KH, KW, "
       "C/Group], attributes and epilogue as Conv. Made by the conv-layout "
       "pass for backends that prefer NHWC.")

# --- Integer products of quantized models (docs/Quantization.md). ---
# Exact in Int32 for 8-bit operands up to K = 2^15 (each product of two
# values with the zero point taken off is below 2^16 in magnitude).
op("IntMatMul", ["LHS", "RHS", "LHSZero", "RHSZero"], infer="IntMatMul",
   rules=[("minRank", "LHS", 2), ("rank", "LHSZero", 1),
          ("rank", "RHSZero", 1)],
   doc="Int32 sum over k of (LHS[..., m, k] - LHSZero[m]) * (RHS[..., k, n] "
       "- RHSZero[n]); LHS and RHS are Int8 or UInt8 [..., M, K] and [..., "
       "K, N] with batch dims broadcast as MatMul; the zero points are Int32 "
       "[M] and [N].")

op("IntConv", ["Input", "Filter", "InputZero", "FilterZero"],
   [("Strides", "ints"), ("Pads", "ints"), ("Dilations", "ints"),
    ("Group", "int")],
   infer="IntConv", rules=[("rank", "Input", 4), ("rank", "Filter", 4),
                           ("rank", "InputZero", 1), ("rank", "FilterZero", 1)],
   doc="Int32 2-D convolution of (Input - InputZero[0]) with (Filter[m] - "
       "FilterZero[m]); Input NCHW and Filter MCHW are Int8 or UInt8, the "
       "zero points Int32 [1] and [M]; padding contributes zero (a pad of "
       "InputZero). Pads: top, left, bottom, right.")

# An integer product with its requantization (made by fold-qdq): the
# IntConv / IntMatMul sum S, then the QLinear store
#   saturate(max?(roundeven(float(S + Bias) * Multiplier) + OutZero))
# in Float32, max(., OutZero) when Relu. Backends without a fused kernel
# lower them to the integer product and that float chain
# (lib/Optimizer/Lower/Quant.cpp), which defines them.
op("RequantConv", ["Input", "Filter", "InputZero", "FilterZero", "Bias",
                   "Multiplier", "OutZero"],
   [("Strides", "ints"), ("Pads", "ints"), ("Dilations", "ints"),
    ("Group", "int"), ("ElemTy", "elemkind"), ("Relu", "int")],
   infer="RequantConv",
   rules=[("rank", "Input", 4), ("rank", "Filter", 4), ("rank", "Bias", 1),
          ("rank", "Multiplier", 1), ("rank", "OutZero", 1)],
   doc="IntConv's sum requantized to ElemTy (Int8 or UInt8): Bias Int32 "
       "and Multiplier Float32 of 1 or M elements (per output channel), "
       "OutZero Int32 [1].")

op("RequantMatMul", ["LHS", "RHS", "LHSZero", "RHSZero", "Bias", "Multiplier",
                     "OutZero"], [("ElemTy", "elemkind"), ("Relu", "int")],
   infer="RequantMatMul",
   rules=[("minRank", "LHS", 2), ("rank", "Bias", 1),
          ("rank", "Multiplier", 1), ("rank", "OutZero", 1)],
   doc="IntMatMul's sum requantized to ElemTy (Int8 or UInt8): Bias Int32 "
       "and Multiplier Float32 of 1 or N elements (per column), OutZero "
       "Int32 [1].")

op("RequantAdd", ["LHS", "RHS", "LHSScale", "LHSZero", "RHSScale", "RHSZero",
                  "OutScale", "OutZero"], [("ElemTy", "elemkind"),
                                           ("Relu", "int")],
   infer="RequantAdd",
   rules=[("rank", "LHSScale", 1), ("rank", "RHSScale", 1),
          ("rank", "OutScale", 1)],
   doc="Quantize([Relu](Dequantize(LHS) + Dequantize(RHS))) to ElemTy (Int8 "
       "or UInt8), each per tensor: LHS and RHS Int8 or UInt8 of one shape, "
       "scales Float32 [1], zero points Int32 [1]. Its lowering is that "
       "chain.")

op("RequantMul", ["LHS", "RHS", "LHSScale", "LHSZero", "RHSScale", "RHSZero",
                  "OutScale", "OutZero"], [("ElemTy", "elemkind")],
   infer="RequantMul",
   rules=[("rank", "LHSScale", 1), ("rank", "RHSScale", 1),
          ("rank", "OutScale", 1)],
   doc="Quantize(Dequantize(LHS) * Broadcast(Dequantize(RHS))) to ElemTy "
       "(Int8 or UInt8), each per tensor: LHS and RHS Int8 or UInt8 of one "
       "rank, each dim of RHS LHS's or 1, scales Float32 [1], zero points "
       "Int32 [1]. Its lowering is that chain.")

op("TableLookup", ["Table", "Input"], infer="TableLookup",
   rules=[("rank", "Table", 1)],
   doc="Table[Input] for every element of Input (Int8 or UInt8; Int8 "
       "values index from 128: Table[Input + 128]), Table a 1-D tensor of "
       "256 elements of any kind; the result has Table's kind and Input's "
       "dims. Its lowering is a Gather at the Int32 index.")

# Quantize/Dequantize stay whole until lowering so that the fold-qdq pass
# sees quantized operands; every backend lowers them to Cast/Round/Clip
# arithmetic (lib/Optimizer/Lower/Quant.cpp).
op("Dequantize", ["Input", "Scale", "Zero"], [("Axis", "int")],
   infer="Dequantize", rules=[("rank", "Scale", 1), ("rank", "Zero", 1)],
   doc="(Input - Zero) * Scale as Float32; Input Int8, UInt8 or Int32; "
       "Scale Float32 and Zero Int32 of 1 element (per tensor) or of "
       "Input's dim Axis (per axis).")

op("Quantize", ["Input", "Scale", "Zero"], [("Axis", "int"),
                                           ("ElemTy", "elemkind")],
   infer="Quantize", rules=[("float", "Input"), ("rank", "Scale", 1),
                            ("rank", "Zero", 1)],
   doc="saturate(round_half_even(Input / Scale) + Zero) as ElemTy (Int8 or "
       "UInt8); Scale and Zero as for Dequantize.")

# --- Transformer fusions: made by the fuse-layernorm pass. ---
op("LayerNorm", ["Input", "Scale", "Bias"], [("Epsilon", "float")],
   infer="LayerNorm",
   rules=[("minRank", "Input", 1), ("rank", "Scale", 1), ("float", "Input"),
          ("sameType", "Scale", "Bias")],
   doc="Normalizes every row along the last axis: (x - mean) / sqrt(var + "
       "Epsilon) * Scale + Bias, with the row's mean and (biased) variance; "
       "Scale and Bias have the last axis' length.")

# --- Attention fusions: made by the fuse-softmax-mask and fuse-attention
# passes (lib/Optimizer/Passes/FuseAttention*.cpp); backends without a kernel
# lower them back to MatMul / Mul / Add / Softmax (lib/Optimizer/Lower).
op("ScaledSoftmax", ["Input", "*Mask"], [("Scale", "float"), ("Causal", "int")],
   infer="ScaledSoftmax", rules=[("minRank", "Input", 2), ("float", "Input")],
   doc="Softmax along the last axis of Input * Scale + Mask: Mask (at most "
       "one) has Input's rank, each dim equal or 1 (read by broadcast). "
       "Causal: the entries whose last index exceeds the second-last are "
       "excluded (weight 0).")

op("Attention", ["Q", "K", "V", "*Mask"], [("Scale", "float"),
                                          ("Causal", "int"),
                                          ("QPerm", "ints"), ("KPerm", "ints"),
                                          ("VPerm", "ints"),
                                          ("OutPerm", "ints")],
   infer="Attention", rules=[("minRank", "Q", 2), ("float", "Q")],
   doc="Scaled dot-product attention over the last two dims: "
       "ScaledSoftmax(Q K^T; Scale, Mask, Causal) V with Q [..., Tq, D], "
       "K [..., Tk, D], V [..., Tk, Dv], equal batch dims; Mask as for "
       "ScaledSoftmax against [..., Tq, Tk]. Result [..., Tq, Dv]. Q, K "
       "and V are read as Transpose(X, XPerm) and the result is stored as "
       "Transpose(result, OutPerm) (an empty perm: none); every perm keeps "
       "the last axis last, so heads are read and written in place.")


# --- Kernel section: which element kinds each op's kernels take. ---
#
# kernel(names, types, of=None, index=None, when=None) says that the shared
# kernel lowering (lib/Kernel, rendered by the CPU and CUDA backends) covers
# the ops `names` when the element kind of `of` (an input's position; None:
# the result) is one of `types`, input `index` (if given) holds Int32 or
# Int64 indices, and the named predicate `when` (a function of the node in
# lib/Kernel/Support.cpp, for conditions on attributes) holds. An op with a
# formula takes "float" unless it says otherwise; an op not named has no
# kernel lowering. interpreter(names, types) says which result kinds the
# Interpreter's kernels take (default "plain"). The type classes
# (include/ember/Graph/KernelTypes.h):
#   any, float (Float16/32/64), numeric (float or integer),
#   numeric_or_bool, int_or_bool, unsigned, f32, f32_or_bytes (Float32,
#   Int8, UInt8), plain (neither quantized nor BFloat16), plain_or_bf16
#   (not quantized), none.
KERNEL_TYPES = ("none", "any", "float", "numeric", "numeric_or_bool",
                "int_or_bool", "unsigned", "f32", "f32_or_bytes", "plain",
                "plain_or_bf16")


def _entries(names, field):
    byname = {o["name"]: o for o in OPS}
    for n in names:
        o = byname[n]
        assert field not in o, "%s: %s given twice" % (n, field)
        yield o


def kernel(names, types, of=None, index=None, when=None):
    assert types in KERNEL_TYPES
    for o in _entries(names, "kernel"):
        o["kernel"] = dict(types=types, of=of, index=index, when=when)


def interpreter(names, types):
    assert types in KERNEL_TYPES
    for o in _entries(names, "interpreter"):
        o["interpreter"] = types


# Data movement: any element kind, moved as whole elements; the integer
# products check their operand kinds in inference.
kernel(["Transpose", "Broadcast", "Concat", "ChannelShuffle", "Slice", "Tile",
        "IntMatMul", "IntConv"], "any")
kernel(["Gather", "GatherElements", "GatherND"], "any", index=1)
# A reduction (add, mul, max, min) needs arithmetic on the elements.
kernel(["ScatterElements", "ScatterND"], "any", index=1,
       when="reductionHasArithmetic")
kernel(["Pad", "Splat", "Where"], "numeric_or_bool")  # Pad: every mode
kernel(["Add", "Sub", "Mul", "Div", "Max", "Min", "Mod", "Sign",
        "ReduceSum", "ReduceMean", "ReduceProd", "ReduceMax", "ReduceMin",
        "CumSum"], "numeric")
kernel(["Pow"], "numeric")  # integers through float64 (exact below 2^53)
kernel(["BitShift"], "unsigned")
kernel(["And", "Or", "Xor", "Not"], "int_or_bool")
kernel(["Equal"], "numeric_or_bool", of=0)
kernel(["Greater", "Less", "GreaterOrEqual", "LessOrEqual", "ArgMax",
        "ArgMin", "TopK"], "numeric", of=0)
kernel(["IsNaN", "IsInf"], "float", of=0)
# BFloat16 only to and from Float32 (the precision rules).
kernel(["Cast"], "any", when="castKindsHaveKernel")
kernel(["Relu", "Sigmoid", "Tanh", "Sqrt", "Exp", "Log", "Neg", "Abs", "Clip",
        "Erf", "Floor", "Ceil", "Round", "Reciprocal", "Sin", "Cos", "Tan",
        "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
        "Gelu"], "float")
kernel(["ConvTranspose"], "float")  # a portable loop nest, not a tuned kernel
kernel(["PoolND"], "numeric", when="averageIsFloat")
kernel(["Resize"], "float", when="resizeCoordModeHasKernel")
# Windows and the portable fallbacks; quantized models pool their bytes.
kernel(["MaxPool"], "f32_or_bytes")
kernel(["AvgPool", "Softmax", "MatMul", "LayerNorm", "NMSKeep"], "f32")

interpreter(["Transpose", "Broadcast", "Concat", "ChannelShuffle"], "any")
# Lowered before the Interpreter runs, or not an instruction.
interpreter(["Gemm", "BatchNorm", "Reshape", "Save", "Quantize", "Dequantize",
             "RequantConv", "RequantMatMul", "RequantAdd", "RequantMul",
             "TableLookup"], "none")
interpreter(["LoopCarry", "LoopBegin", "LoopParam", "LoopEnd", "LoopFinal"],
            "any")  # run by the instruction walk (jumps), not executeOp
interpreter(["Cast"], "plain_or_bf16")  # BFloat16 rounds to nearest even
interpreter(["MaxPool"], "f32_or_bytes")
interpreter(["MatMul", "Conv", "ConvNHWC", "AvgPool", "Softmax",
             "ScaledSoftmax", "Attention", "NMSKeep"], "f32")


# lowering(fn, names): the shared kernel lowering builds the kernels of the
# structured ops `names` with `bool kir::fn(const NameInst &I, const
# MemoryPlan &plan, std::vector<Kernel> &out)` (lib/Kernel; `const
# Instruction &` where one function serves several ops), false where it has
# no rule for the instruction's attributes or shapes. opgen writes the
# declarations (KernelLowerings.h) and the dispatch by instruction kind
# (KernelLowerings.inc). Elementwise ops need no entry.
def lowering(fn, names):
    for o in _entries(names, "lowering"):
        o["lowering"] = fn


lowering("lowerStridedCopy", ["Transpose", "Broadcast"])  # Structured.cpp
lowering("lowerConcat", ["Concat"])
lowering("lowerPool", ["MaxPool", "AvgPool"])
lowering("lowerSoftmax", ["Softmax"])
lowering("lowerMatMul", ["MatMul"])
lowering("lowerReduce", ["ReduceSum", "ReduceMean", "ReduceProd", "ReduceMax",
                         "ReduceMin"])  # Reductions.cpp
lowering("lowerSlice", ["Slice"])
lowering("lowerChannelShuffle", ["ChannelShuffle"])
lowering("lowerPad", ["Pad"])
lowering("lowerGather", ["Gather"])  # Indexing.cpp
lowering("lowerGatherElements", ["GatherElements"])
lowering("lowerGatherND", ["GatherND"])
lowering("lowerScatterElements", ["ScatterElements"])
lowering("lowerScatterND", ["ScatterND"])
lowering("lowerTile", ["Tile"])
lowering("lowerArgReduce", ["ArgMax", "ArgMin"])
lowering("lowerCumSum", ["CumSum"])
lowering("lowerTopK", ["TopK"])
lowering("lowerNMSKeep", ["NMSKeep"])  # NMS.cpp
lowering("lowerPoolND", ["PoolND"])  # Windows.cpp
lowering("lowerConvTranspose", ["ConvTranspose"])
lowering("lowerResize", ["Resize"])
lowering("lowerIntMatMul", ["IntMatMul"])  # IntProducts.cpp
lowering("lowerIntConv", ["IntConv"])
lowering("lowerLayerNorm", ["LayerNorm"])  # Normalization.cpp

# --- Import section: ONNX ops that are one node of a kind. ---
#
# onnx_import(first, last, names) says that the ONNX ops `names`, at opsets
# first..last, import as one node of the op of the same name on the ONNX
# node's inputs ("OnnxName=Kind" where the names differ); opgen writes their
# import rules (DirectImports.inc: importUnaryOp or importBinaryOp by the
# kind's input count, whose operand checks and broadcasts are the
# importer's). Ops needing attributes, casts or composition keep a
# hand-written rule in lib/Importer.
def onnx_import(first, last, names):
    byname = {o["name"]: o for o in OPS}
    for n in names:
        onnx_name, _, kind = n.partition("=")
        o = byname[kind or onnx_name]
        assert len(o["inputs"]) in (1, 2), "%s: not unary or binary" % n
        o.setdefault("onnx", []).append((onnx_name, first, last))


onnx_import(1, 17, ["Softplus", "Softsign", "Not"])
onnx_import(6, 17, ["Relu", "Sigmoid", "Tanh", "Sqrt", "Exp", "Log", "Floor",
                    "Ceil", "Reciprocal"])
onnx_import(7, 17, ["Add", "Sub", "Mul", "Div", "Sin", "Cos", "Tan", "Asin",
                    "Acos", "Atan", "And", "Or", "Xor", "Equal", "Greater",
                    "Less"])
onnx_import(9, 17, ["Erf", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Sign",
                    "IsNaN"])
onnx_import(11, 17, ["Round"])
onnx_import(12, 17, ["GreaterOrEqual", "LessOrEqual"])
onnx_import(18, 18, ["BitwiseNot=Not", "BitwiseAnd=And", "BitwiseOr=Or",
                     "BitwiseXor=Xor"])
onnx_import(18, 22, ["Mish"])
