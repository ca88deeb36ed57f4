//===- ImportRuntimeOps.h - Ops with genuine run-time operands -*- C++ -*-===//
#ifndef EMBER_LIB_IMPORTER_IMPORTRUNTIMEOPS_H
#define EMBER_LIB_IMPORTER_IMPORTRUNTIMEOPS_H

#include "ImportHelpers.h"

namespace ember {
namespace onnximport {

/// Trilu's [n, m] mask, true where x is zeroed, computed in the graph from
/// the diagonal offsets j - i: k is input 1 when \p runtimeK, else \p k.
llvm::Expected<NodeValue> triluZeroMask(ImportContext &ctx,
                                        const onnx::NodeProto &node, int64_t n,
                                        int64_t m, bool upper, bool runtimeK,
                                        int64_t k);

/// CumSum whose axis is the graph input \p axisInput; \p attrs are the
/// CumSum attributes (axis first, replaced per candidate axis).
llvm::Error importRuntimeAxisCumSum(ImportContext &ctx,
                                    const onnx::NodeProto &node, NodeValue x,
                                    Placeholder *axisInput, AttrList attrs);

/// Range with a graph input among start, limit and delta: the length is
/// the declared output length, the values start + i * delta.
llvm::Error importRuntimeRange(ImportContext &ctx, const onnx::NodeProto &node);

/// The per-dim lengths and steps of a Slice whose computed starts and ends
/// differ by constants.
struct FixedSlice {
  Ints length, step;
  /// Per dim, the starts / ends entry that slices it with a computed start
  /// (-1 for none, or constant ones), and its end - start.
  Ints entry, span;
};

/// A Slice (opset >= 10) of \p x whose starts or ends are computed in the
/// graph but whose ends - starts is a constant per entry by an affine
/// analysis of both (one base value through Add / Sub of constants,
/// Reshape, Broadcast, integer Cast and 1-D Concat; axes and steps
/// constants): its lengths, min(ceil((end - start) / |step|),
/// ceil(n / |step|)) per sliced dim (ImportAffineSlice.cpp); none where
/// the analysis does not apply.
llvm::Expected<std::optional<FixedSlice>>
fixedSliceLengths(ImportContext &ctx, const onnx::NodeProto &node, NodeValue x);

/// Fails the call (a run-time check) when ONNX's slice of dim \p a of \p x
/// by \p fixed, \p rawStart the start operand's entry and \p start its
/// ONNX start (Int64 [1], normalized and clamped), has another length than
/// the compiled one: a window that runs off the data, where ONNX gives a
/// shorter slice.
llvm::Error checkFixedWindow(ImportContext &ctx, const onnx::NodeProto &node,
                             NodeValue x, const FixedSlice &fixed, int64_t a,
                             NodeValue start, NodeValue rawStart);

/// Slice (opset >= 10) with starts, ends, axes or steps fed at run time:
/// the output shape is the declared one (checked before each run), each
/// dim gathered at start + i * step computed in the graph. With \p fixed
/// (fixedSliceLengths), the lengths are those, each window that runs off
/// the data fails the call (checkFixedWindow), and each start, normalized
/// and clamped as ONNX does, is also clamped so that the gather never reads
/// outside the dim (docs/RuntimeInputs.md).
llvm::Error importRuntimeSlice(ImportContext &ctx, const onnx::NodeProto &node,
                               NodeValue x, const FixedSlice *fixed = nullptr);

/// Pad (opset >= 11) with pads (and the constant value) fed at run time:
/// the output shape is the declared one (checked before each run); per dim
/// the input is gathered at the source index of every output position,
/// computed in the graph for \p mode (0 constant, 1 reflect, 2 edge), and
/// constant mode selects the value outside the input.
llvm::Error importRuntimePad(ImportContext &ctx, const onnx::NodeProto &node,
                             NodeValue x, int64_t mode);

/// Resize or Upsample whose scales (input \p scalesInput) are fed at run
/// time: the output shape is the declared one (checked before each run);
/// per dim the source coordinates are computed in the graph from the scale
/// and the taps gathered and weighted as the Resize node does (\p mode,
/// \p coord and \p nearest numbered as its attributes).
llvm::Error importRuntimeResize(ImportContext &ctx, const onnx::NodeProto &node,
                                NodeValue x, int scalesInput, int64_t mode,
                                int64_t coord, int64_t nearest);

/// Compress whose condition is fed at run time, along \p axis of \p x
/// (flattened when the node has no axis): the output's declared extent K
/// is the number of true entries the compiled graph selects (the first K,
/// found from a running count of the condition); a condition with another
/// count fails the call before the run (the check of path 3).
llvm::Error importRuntimeCompress(ImportContext &ctx,
                                  const onnx::NodeProto &node, NodeValue x,
                                  int64_t axis);

/// NonZero of a run-time tensor: the declared output [rank, K] bounds the
/// count; the first K nonzero positions are found as in Compress and
/// unravelled; another count fails the call before the run.
llvm::Error importRuntimeNonZero(ImportContext &ctx,
                                 const onnx::NodeProto &node, NodeValue x);

/// The positions (float, [k]) of the first \p k nonzero entries of the
/// 1-D \p cond, found from its running count (as Compress does).
llvm::Expected<NodeValue> firstTruePositions(ImportContext &ctx,
                                             const onnx::NodeProto &node,
                                             NodeValue cond, int64_t k);
/// Marks input \p i, when a graph input, to be checked before each run by
/// importing the node again with its value; an error when it is computed.
llvm::Error checkGraphInput(ImportContext &ctx, const onnx::NodeProto &node,
                            int i);

} // namespace onnximport
} // namespace ember

#endif
