//===- ImportHelpers.h - Building blocks for op importers ------*- C++ -*-===//
//
// Shared by the importer files added for ONNX breadth (ImportMath.cpp,
// ImportTensor.cpp, ImportReduce.cpp, ImportNN.cpp): node creation with
// errors that name the ONNX node, typed scalar constants, broadcasting
// binary ops and constant-input decoding.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_LIB_IMPORTER_IMPORTHELPERS_H
#define EMBER_LIB_IMPORTER_IMPORTHELPERS_H

#include "ImportContext.h"

namespace ember {
namespace onnximport {

using Ints = std::vector<int64_t>;

/// The largest tensor the importer computes at import time (folded nodes,
/// masks and tables it builds): anything larger is computed in the graph,
/// so a declared shape never makes the import itself slow or huge.
constexpr int64_t kMaxFoldElements = int64_t(1) << 24;

/// The most times an importer repeats its node pattern along a declared
/// dim or an attribute (RNN steps, LRN window positions, 3-D convolution
/// depth taps): the graph must not grow with a declared shape.
constexpr int64_t kMaxUnrolledSteps = 4096;

/// The name given to nodes built for \p node.
std::string nameOf(const onnx::NodeProto &node);

/// An error "node 'x' (Op): msg".
llvm::Error fail(const onnx::NodeProto &node, const llvm::Twine &msg);

/// Creates one node of \p kind; result \p resNo.
llvm::Expected<NodeValue> make(ImportContext &ctx, const onnx::NodeProto &node,
                               OpKind kind, llvm::ArrayRef<NodeValue> ins,
                               AttrList attrs = {}, unsigned resNo = 0);

/// A Constant of \p kind and \p dims filled with \p v; above
/// kMaxFoldElements elements a Splat (or one value broadcast in the graph
/// where float does not hold \p v exactly), so its cost does not grow with
/// \p dims.
NodeValue constantOf(ImportContext &ctx, const onnx::NodeProto &node,
                     ElemKind kind, llvm::ArrayRef<dim_t> dims, double v);

/// A Constant of \p kind holding 0 .. n-1, shaped as \p dims (one dim is
/// n, the others 1); an error naming \p node when n is above
/// kMaxFoldElements (a declared dim must not size the import's work).
llvm::Expected<NodeValue> iotaConstant(ImportContext &ctx,
                                       const onnx::NodeProto &node, int64_t n,
                                       llvm::ArrayRef<dim_t> dims,
                                       ElemKind kind = ElemKind::Int64);

/// The Int64 values \p v as a Constant shaped \p dims, named after \p node
/// and \p what.
NodeValue int64Constant(ImportContext &ctx, const onnx::NodeProto &node,
                        const char *what, llvm::ArrayRef<int64_t> dims,
                        llvm::ArrayRef<int64_t> v);

/// \p v + \p n where \p v < 0, else \p v: negative indices or axes, computed
/// in the graph, counted from the end of an extent (or rank) \p n.
llvm::Expected<NodeValue> wrapNegative(ImportContext &ctx,
                                       const onnx::NodeProto &node, NodeValue v,
                                       int64_t n);

/// The element kind the node's `dtype` attribute names, or \p dflt
/// without one.
llvm::Expected<ElemKind> dtypeOr(const onnx::NodeProto &node, ElemKind dflt);

/// \p v as a Constant of the type of \p like.
NodeValue constantLike(ImportContext &ctx, const onnx::NodeProto &node,
                       NodeValue like, double v);

/// A binary op with ONNX multidirectional broadcasting; kinds must match.
llvm::Expected<NodeValue> binary(ImportContext &ctx,
                                 const onnx::NodeProto &node, OpKind kind,
                                 NodeValue a, NodeValue b);

/// A 2-D or batched MatMul of \p a by \p b without transposed operand or
/// fused epilogue.
llvm::Expected<NodeValue> plainMatMul(ImportContext &ctx,
                                      const onnx::NodeProto &node, NodeValue a,
                                      NodeValue b);
/// A unary op.
llvm::Expected<NodeValue> unary(ImportContext &ctx, const onnx::NodeProto &node,
                                OpKind kind, NodeValue x);

/// \p x reshaped to \p dims (no node when equal).
llvm::Expected<NodeValue> reshapeTo(ImportContext &ctx,
                                    const onnx::NodeProto &node, NodeValue x,
                                    llvm::ArrayRef<int64_t> dims);

/// \p x converted to \p kind (no node when equal).
llvm::Expected<NodeValue> castTo(ImportContext &ctx,
                                 const onnx::NodeProto &node, NodeValue x,
                                 ElemKind kind);

/// A reduction of \p kind over \p axes (any order, normalized here).
llvm::Expected<NodeValue> reduce(ImportContext &ctx,
                                 const onnx::NodeProto &node, OpKind kind,
                                 NodeValue x, Ints axes, bool keepDims);

/// Normalizes \p axis (may be negative) for \p rank.
llvm::Expected<int64_t> normAxis(const onnx::NodeProto &node, int64_t axis,
                                 int64_t rank);

/// Input \p i as a constant int list, or \p dflt when the input is absent.
llvm::Expected<Ints> optionalInts(ImportContext &ctx,
                                  const onnx::NodeProto &node, int i,
                                  std::optional<Ints> dflt);

/// The scalar value of constant input \p i as a double.
llvm::Expected<double> constantScalar(ImportContext &ctx,
                                      const onnx::NodeProto &node, int i);

/// The scalar value of constant input \p i as an integer (truncated),
/// saturated to +-2^62 so that converting it is defined and later
/// arithmetic on it cannot overflow; NaN is an error.
llvm::Expected<int64_t> constantScalarInt(ImportContext &ctx,
                                          const onnx::NodeProto &node, int i);

/// \p v's dims as a mutable list.
Ints dimsOf(NodeValue v);

/// One Slice node from per-dim start/step/count (\p x itself when it
/// takes everything, an empty constant when a count is not positive).
llvm::Expected<NodeValue> sliceNode(ImportContext &ctx,
                                    const onnx::NodeProto &node, NodeValue x,
                                    const Ints &starts, const Ints &steps,
                                    const Ints &counts);

/// An empty Constant of \p kind and \p dims (negative dims clamped to 0):
/// a result with no elements holds nothing to compute.
NodeValue emptyConstant(ImportContext &ctx, const onnx::NodeProto &node,
                        ElemKind kind, Ints dims);
/// Binds output \p i of \p node (empty names are skipped).
void bindOutput(ImportContext &ctx, const onnx::NodeProto &node, int i,
                NodeValue v);

/// (x - mean) / sqrt(var + eps) over \p axes, with kept dims; the mean and
/// 1 / sqrt(var + eps) when asked (LayerNormalization's extra outputs).
llvm::Expected<NodeValue> normalize(ImportContext &ctx,
                                    const onnx::NodeProto &node, NodeValue x,
                                    const Ints &axes, double eps,
                                    NodeValue *meanOut = nullptr,
                                    NodeValue *invStdOut = nullptr);

/// A pooling window: per spatial dim its size, stride and dilation; pads
/// all begins, then all ends.
struct PoolWindow {
  Ints kernel, strides, pads, dilations;
};

/// The window attributes of pooling \p node over \p x (kernel_shape
/// defaulting to \p kernel), checked, auto_pad resolved.
llvm::Expected<PoolWindow> readPoolWindow(const onnx::NodeProto &node,
                                          NodeValue x, Ints kernel);

/// Grows end pads so that the floor formula yields the ceil_mode size; the
/// last window must start inside the input or the leading padding.
void applyCeil(PoolWindow &w, llvm::ArrayRef<dim_t> dims);

/// MaxPool's Indices output for \p x pooled into \p y by \p w (pads
/// grown for ceil_mode): the flat index of each maximum in \p x, as int64
/// (ImportPoolIndices.cpp).
llvm::Expected<NodeValue> maxPoolIndices(ImportContext &ctx,
                                         const onnx::NodeProto &node,
                                         NodeValue x, const PoolWindow &w,
                                         NodeValue y);

/// A list of import rules defined in one file.
using RuleList = llvm::ArrayRef<ImportRule>;
RuleList getMathImportRules();
/// The rules of lib/Graph/Ops.py's import section (ImportMath.cpp).
RuleList getDirectImportRules();
RuleList getTensorImportRules();
RuleList getSplitPadImportRules();
RuleList getReduceImportRules();
RuleList getNNImportRules();

/// A float convolution of \p x by \p w (1-D or 2-D) with the node's window
/// attributes; \p bias may be null. Given zero points (Int32 [1] and [M]),
/// an exact IntConv of 8-bit \p x and \p w instead, without bias.
llvm::Expected<NodeValue> convolution(ImportContext &ctx,
                                      const onnx::NodeProto &node, NodeValue x,
                                      NodeValue w, NodeValue bias,
                                      NodeValue xZero = NodeValue(),
                                      NodeValue wZero = NodeValue());

RuleList getQuantImportRules();
RuleList getSignalImportRules();
RuleList getLpImportRules();
RuleList getRNNImportRules();

/// The domain of the optimizer-step ops, and its importers (opset 1;
/// ImportTraining.cpp).
constexpr const char *kTrainingDomain = "ai.onnx.preview.training";
RuleList getTrainingImportRules();
/// The domain of onnxruntime's contrib ops, and the importers of its
/// quantized (QLinear*, QGemm) ops (opset 1; ImportQuantMS.cpp).
constexpr const char *kMicrosoftDomain = "com.microsoft";
RuleList getMicrosoftImportRules();
RuleList getGridSampleImportRules();
RuleList getRoiAlignImportRules();
RuleList getNMSImportRules();
RuleList getUniqueImportRules();
RuleList getSequenceImportRules();
RuleList getEinsumImportRules();
/// TfIdfVectorizer over integer pools (ImportTfIdf.cpp).
RuleList getTfIdfImportRules();
RuleList getNormalizationImportRules();
RuleList getAttentionImportRules();
/// RandomUniform/Normal(Like) and Bernoulli, drawn at compile time
/// (ImportRandom.cpp).
RuleList getRandomImportRules();

// Run-time checks (ImportChecks.cpp, docs/RuntimeInputs.md "Run-time
// checks").

/// When \p failed (Bool [1]) holds at run time, the call fails with
/// "run-time check failed: node 'N' (Op): \p what". A constant \p failed
/// adds nothing (false) or is this error at import (true).
llvm::Error addRuntimeCheck(ImportContext &ctx, const onnx::NodeProto &node,
                            NodeValue failed, const std::string &what);
/// The largest of \p statuses (the number of a failed check, 0 if none
/// failed); none when \p statuses is empty.
llvm::Expected<std::optional<NodeValue>>
combineChecks(ImportContext &ctx, const onnx::NodeProto &node,
              llvm::ArrayRef<NodeValue> statuses);
/// Adds \p statuses to the pending ones, each counted only where \p cond
/// (one Bool) holds: the checks of a branch that did not run pass.
llvm::Error keepChecksWhere(ImportContext &ctx, const onnx::NodeProto &node,
                            NodeValue cond, llvm::ArrayRef<NodeValue> statuses);
/// Saves the pending statuses' largest into the hidden output
/// `check.status` (Module::getCheckStatus); nothing without checks.
llvm::Error finishRuntimeChecks(ImportContext &ctx);

// Importers of ImportResizeLoss.cpp, listed in getNNImportRules().
llvm::Error importResize(ImportContext &ctx, const onnx::NodeProto &node);
llvm::Error importUpsample(ImportContext &ctx, const onnx::NodeProto &node);
llvm::Error importNLLLoss(ImportContext &ctx, const onnx::NodeProto &node);
llvm::Error importSCELoss(ImportContext &ctx, const onnx::NodeProto &node);

} // namespace onnximport
} // namespace ember

#endif
