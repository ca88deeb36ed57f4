//===- FuzzRegressionTest.cpp - Inputs the fuzzer found, kept forever -----===//
//
// Every input in tests/fuzz/regressions once crashed a fuzz target or made
// a sanitizer report. Each must now give a clean error containing the
// listed text, through the same steps the fuzz target runs: for .onnx
// files (ember-fuzz-import, ember-fuzz-model) the import, then the
// Interpreter's pipeline up to memory planning; for .txt files
// (ember-fuzz-graph) the graph text parser; for .ir files (ember-fuzz-ir) the
// IR text parser; for .pb files (ember-fuzz-tensor) the TensorProto input
// reader. Under scripts/test.sh --sanitize these also prove the sanitizers stay
// quiet.
//
//===----------------------------------------------------------------------===//
#include "ember/Backend/Pipeline.h"
#include "ember/Graph/Parser.h"
#include "ember/IR/IRParser.h"
#include "ember/Importer/ONNXImporter.h"
#include "ember/Importer/TensorIO.h"

#include "../../backends/Interpreter/Generic.h"
#include "../fuzz/RunSmall.h"
#include "TestUtils.h"

#include "llvm/Support/MemoryBuffer.h"

#include <limits>

using namespace ember;
using namespace ember::test;

namespace {

struct Regression {
  const char *file;   ///< In tests/fuzz/regressions.
  const char *expect; ///< Text the error must contain.
};

const Regression kRegressions[] = {
    // Signed overflow multiplying Reshape's target dims (UBSan).
    {"reshape-shape-overflow.onnx", "(Reshape): invalid shape"},
    // Gemm with a bool B imported, then lowering's MatMul builder aborted
    // (now refused by the ONNX schema's type constraint).
    {"gemm-bool-b.onnx", "(Gemm): input 1 'b' has type tensor(bool)"},
    // Signed overflow in Type::size() of a huge Tile result (UBSan, CI).
    {"tile-size-overflow.onnx", "more than the maximum"},
    // InstanceNormalization of a rank-1 input wrote past a shape (ASan, CI).
    {"instancenorm-rank1.onnx", "has no channel dimension"},
    // An LSTM whose bias is a scalar indexed a vector of its rank (UBSan);
    // the schema check now refuses its bool W first.
    {"gru-short-bias.onnx", "(LSTM): input 1 'W' has type tensor(bool)"},
    // A quantization parameter reshaped along an axis past the rank (ASan);
    // the schema check now refuses its missing inputs first.
    {"qlinearmatmul-axis.onnx",
     "(QLinearMatMul): missing required input 6 'y_scale'"},
    // Tile repeats whose product overflowed the result dims (UBSan).
    {"tile-repeats-overflow.onnx", "overflow the dims"},
    // NegativeLogLikelihoodLoss with a scalar target (UBSan).
    {"nllloss-scalar-target.onnx", "must have one dim less than the input"},
    // Constant folding added int64 values that overflow (UBSan); valid
    // input: it must compile, with wrapping arithmetic ("" matches success).
    {"int64-add-overflow.onnx", ""},
    // A graph text whose Ints attribute value overflowed int64_t when
    // converted from double (UBSan, ember-fuzz-graph).
    {"graph-ints-attr-overflow.txt", "bad integer '5.88889e+33'"},
    // A Tile whose inferred result (6.4 G elements) was printed as a type
    // the parser then refused to read back (ember-fuzz-graph round trip).
    {"graph-tile-result-too-large.txt",
     "%r: the result has more than 2147483648 elements"},
    // An input TensorProto with dims [0, 342273571680157688, 44]: empty, so
    // the element check passed, then strides overflowed (UBSan, tensor).
    {"tensorproto-zero-dim-strides.pb", "has more than 2147483648 elements"},
    // A GRU unrolled over 89 steps spent seconds in reuse-in-place, which
    // rewrote the whole function per merge (timeout under load, import);
    // valid input, it must compile.
    {"gru-89-steps-slow.onnx", ""},
    // MaxUnpool with fewer strides than kernel dims read past them (ASan).
    {"maxunpool-short-strides.onnx", "strides need one value and pads two"},
    // PRelu whose slope initializer is empty ([1, 0, 0, 7936]): the reshape
    // that prepends ones built a node with zero dims and aborted (import).
    {"prelu-empty-slope.onnx", "cannot broadcast float<1 x 0 x 0 x 7936>"},
    // ConvTranspose whose output_shape had fewer values than spatial dims
    // was read past its end (ASan, import).
    {"convtranspose-output-shape-rank.onnx", "output_shape has 1 values"},
    // Hardmax of a scalar took the front of an empty list of axes (UBSan,
    // import).
    {"hardmax-scalar.onnx", "(Hardmax): input must have rank >= 1"},
    // DepthToSpace with blocksize 2^63 - 1 squared it (UBSan, model).
    {"depthtospace-blocksize-overflow.onnx",
     "channels are not a multiple of blocksize^2"},
    // MaxUnpool with kernel_shape -2^63 + 2: the unpooled dims and their
    // product overflowed (UBSan, model).
    {"maxunpool-kernel-overflow.onnx", "(MaxUnpool): invalid output shape"},
    // NegativeLogLikelihoodLoss of x [3, 6] with a target [6]: its
    // GatherElements had indices larger than the data off the axis, and the
    // Interpreter read past the data (ASan, model, at run time).
    {"nllloss-target-larger.onnx", "are larger than float<3 x 6> off axis 1"},
    // LSTM with hidden_size 2^63 - 1: gates * hidden_size overflowed
    // (UBSan, model).
    {"lstm-hidden-size-overflow.onnx", "(LSTM): needs a 3-D input"},
    // LRN with size 2^31 - 1 over 5 channels: the import built one Slice
    // and Add per window position (a hang, model); valid input, it must
    // compile.
    {"lrn-size-huge-slow.onnx", ""},
    // ReverseSequence with time_axis 2^63 - 1: the check that the axes
    // are 0 and 1 added them and overflowed (UBSan, model, CI smoke).
    {"reversesequence-axis-overflow.onnx",
     "(ReverseSequence): needs batch and time axes 0 and 1"},
    // MaxPool with auto_pad SAME and strides 2^63 - 1: ceil(in / s) added
    // them (UBSan, model, CI smoke); its huge kernel is refused first now.
    {"pool-same-stride-overflow.onnx", "give a window too large"},
    // SoftmaxCrossEntropyLoss with ignore_index over a target of 2^31
    // elements: the import materialized constants of the target's shape
    // (out of memory, model, CI smoke); they are Splats now.
    {"sceloss-huge-target-constant.onnx", "must have one dim less"},
    // A Loop with a trip count of 2^63 - 1: converting it from double was
    // out of range (UBSan, model, the 2026-12-06 smoke); it saturates and
    // meets the unrolling limit; kept as a loop, the constant trip count
    // limit of a real loop refuses it.
    {"loop-trip-count-int64-max.onnx",
     "(Loop): a constant trip count of 9200000000000000000; the limit is "
     "1048576"},
    // EyeLike with k = 2^63 - 1: i + k overflowed (UBSan, model, CI smoke);
    // a diagonal outside the matrix is clamped: all zeros, valid input.
    {"eyelike-k-int64-max.onnx", ""},
    // The sweep of one integer attribute, input dim or constant element at
    // a time set to an extreme (the 2026-12-06 CI failure's follow-up):
    // AveragePool / MaxPool with a kernel of 2^31 - 1 or 2^40 over a 5 x 5
    // input: the Interpreter walked every tap (a timeout, model target).
    {"avgpool-kernel-2g-run-slow.onnx", ""},
    {"maxpool-kernel-2t-run-slow.onnx", ""},
    // Pad with a pad of -2^63: its crop negated it (UBSan).
    {"pad-int64-min-negation.onnx",
     "(Pad): pad -9223372036854775808 is out of range"},
    // Equal against a uniform Int64 constant of 2^63 - 1: splat-fold made a
    // Splat of the rounded 2^63, which the Interpreter converted out of
    // range (UBSan); such values stay constants.
    {"splat-int64-max-conversion.onnx", ""},
    // Resize with a NaN scale (the sweep's float values: NaN, infinities,
    // 1e30): floor(dim * scale) converted to int64 (UBSan).
    {"resize-scale-nan.onnx", "(Resize): scale nan of dim 0 must be positive"},
    // Split sizes of 2^63 - 1: the running offset overflowed (UBSan).
    {"split-size-int64-max.onnx", "(Split): split sizes exceed the dimension"},
    // A Scan whose body has fewer outputs than state variables: the unroll
    // copied past the end of the body's outputs (UBSan, model, CI smoke).
    // The same node at opset 8 (the file's opset 3 predates Scan, which is
    // refused first now: fuzz finding 31).
    {"scan-body-fewer-outputs.onnx",
     "Scan does not exist at opset 3; ONNX introduced it at opset 8"},
    {"scan-body-fewer-outputs-opset8.onnx", "fewer than the 1 state variables"},
    // Trilu of x [3, 2^29]: the import built its 1.6 G-element mask one
    // element at a time (a timeout, model, CI smoke); a mask above the
    // fold limit is computed in the graph, and a dim above it is refused.
    {"trilu-huge-mask-slow.onnx",
     "(Trilu): the last two dims (3 x 536870912) must each be at most"},
    // The audit after the Trilu finding: work at import sized by a declared
    // shape or a constant's value, each now bounded by the fold limit or
    // moved into the graph. Valid inputs ("") must compile.
    // ReverseSequence with constant lengths built an index of x's 2^31
    // elements, one division per element.
    {"reversesequence-huge-index-slow.onnx", ""},
    // Gemm without C: a zero C of 2^31 floats (8 GiB) was filled.
    {"gemm-huge-zero-c.onnx", ""},
    // Einsum "ii->i" of 46340 x 46340: an identity of 2^31 elements.
    {"einsum-huge-diagonal-slow.onnx", ""},
    // AveragePool with a 2^40 kernel, ceil_mode and count_include_pad: the
    // rescale counted the taps one by one, 2^42 of them.
    {"avgpool-huge-kernel-rescale-slow.onnx", ""},
    // LRN over 2^31 elements: alpha / size is not a float, so its
    // constant was built at x's shape instead of a Splat.
    {"lrn-inexact-alpha-constant.onnx", ""},
    // Range to 1e30: the count was converted to int64 (undefined), and a
    // legal count up to 2^31 was filled at import.
    {"range-huge-limit.onnx", "(Range): the result has more than 16777216"},
    // OneHot of depth 1e30: converted to int64 (undefined).
    {"onehot-huge-depth.onnx", "(OneHot): depth must be positive"},
    // HannWindow of 2^28 points: one cosine each at import.
    {"hannwindow-huge-size-slow.onnx", "size must be in [1, 16777216]"},
    // DFT of 2^20 samples: a matrix of 2^41 entries (its size overflowed).
    {"dft-huge-matrix.onnx", "bins has more than 16777216 entries"},
    // LSTM over a declared 2^20 steps: every step is unrolled.
    {"lstm-long-sequence-slow.onnx",
     "(LSTM): a sequence of 1048576 steps; the limit is 4096"},
    // LRN of size 2^31 - 1 over 2^20 channels: one Slice per position of
    // the window, which reaches C - 1 channels to each side.
    {"lrn-wide-window-slow.onnx",
     "(LRN): a window of 2097151 channels; the limit is 4096"},
    // A 3-D Conv whose weight input declares a depth of 2^20: one 2-D
    // convolution per depth tap.
    {"conv3d-deep-kernel-slow.onnx",
     "(Conv): a kernel depth of 1048576; the limit is 4096"},
    // Compress with a run-time condition of 4 entries and a declared
    // output of 2^30: constants of the declared count were built.
    {"compress-declared-count-huge.onnx",
     "(Compress): the output declares 1073741824 entries, more than the 4"},
    // Unique whose declared output length (2^27) sized an [n, K] constant:
    // the model smoke timed out filling it (CI, 2026-12-07).
    {"unique-declared-count-huge.onnx",
     "(Unique): the outputs declare 134217728 unique rows, more than the 6"},
    // A run-time Slice whose starts input declares 2^31 - 1 entries and
    // no axes: the default axes, a 16 GiB constant, ran out of memory
    // (model target, 2026-12-07).
    {"slice-runtime-starts-huge.onnx",
     "(Slice): starts holds 2147483647 entries, more than the data's rank 1"},
    // RoiAlign with an output 2^23 wide (valid, within the element
    // limit): its sample grids were built at import as two constants of
    // every sample (168 M floats each; 3.4 s in Release, a 10 s fuzz
    // timeout under ASan). Valid input: it must compile.
    {"roialign-wide-output-slow.onnx", ""},
    // Constant folding of an integer Pow multiplied in int64 one step per
    // unit of the exponent: signed overflow (UBSan), and an exponent of
    // 2^62 would never end. Valid input: it must compile, wrapping.
    {"pow-int-overflow.onnx", ""},
    // Hardmax over an axis of 2^31: its iota (16 GiB) was built at import.
    {"hardmax-huge-axis.onnx",
     "(Hardmax): needs the positions 0 .. 2147483647 along one dim"},
    // NonZero without outputs, at opset 19 (past libonnx's schemas, where
    // only required inputs were checked): its import named output 0 (UBSan
    // in protobuf, model, the 2026-12-07 campaign).
    {"nonzero-no-output.onnx", "(NonZero): missing required output 0 'Y'"},
    // MaxPool with kernel [2, 1] and dilations [2, 2^63 - 1] (one tap along
    // W, a legal window): the Interpreter's tap count ceil(room / dil)
    // added them (UBSan, model, the 2026-12-07 campaign, finding 30); the
    // Release Interpreter gave -inf for most outputs. See PoolTaps below.
    {"maxpool-dilation-int64-max.onnx", ""},
    // An opset 8 Scan over a [256, 256] state, batch and steps both 256:
    // the unrolling rule counted one batch element, so 469 bytes became
    // 395,000 nodes, and dead-code elimination, erasing each node with a
    // search of the function, took minutes (timeout, model, the 2026-12-07
    // campaign, finding 31). The rule counts the whole batch now (each
    // element's scan is kept as a loop), and erasing a node is O(1).
    {"scan8-batch-unroll-slow.onnx", ""},
    // A Loop whose body declares one input for its three (iteration,
    // condition, one carried value): the loop import read body input 1
    // (ASan, import, the 2026-12-07 campaign, finding 32).
    {"loop-body-too-few-inputs.onnx",
     "(Loop): the body takes 1 inputs; a Loop with 1 carried value(s) gives "
     "it 3"},
};

/// The error of importing, compiling and (when small) running \p bytes on
/// the Interpreter as ember-fuzz-model does, or "" on success.
std::string pipelineError(llvm::StringRef bytes) {
  registerAllBackends();
  Module M;
  auto F = importONNXBuffer(bytes, "regression", M);
  if (!F)
    return llvm::toString(F.takeError());
  auto B = getBackend("Interpreter");
  if (!B)
    return llvm::toString(B.takeError());
  auto ir = optimizeAndGenerateIR(**F, **B, CompileOptions());
  if (!ir)
    return llvm::toString(ir.takeError());
  MemoryPlan plan = planMemory(**ir);
  if (llvm::Error err = verifyMemoryPlan(**ir, plan))
    return llvm::toString(std::move(err));
  // Small plans also run, as ember-fuzz-model runs them: some findings were
  // kernels, not compiles.
  if (llvm::Error err = fuzz::runSmall(M, **B, std::move(*ir), plan))
    return llvm::toString(std::move(err));
  return "";
}

/// The error of parsing \p bytes as graph text, or "" on success.
std::string graphTextError(llvm::StringRef bytes) {
  Module M;
  auto F = parseFunction(bytes, M);
  return F ? "" : llvm::toString(F.takeError());
}

/// The error of reading \p bytes as an input TensorProto, or "" on success.
std::string tensorProtoError(llvm::StringRef bytes) {
  auto t = parseTensorProto(bytes, "regression.pb");
  return t ? "" : llvm::toString(t.takeError());
}

/// The error of parsing \p bytes as IR text, or "" on success.
std::string irTextError(llvm::StringRef bytes) {
  auto ir = parseIR(bytes, "regression.ir");
  return ir ? "" : llvm::toString(ir.takeError());
}

class FuzzRegressionTest : public ::testing::TestWithParam<Regression> {};

} // namespace

TEST_P(FuzzRegressionTest, GivesACleanError) {
  std::string path = sourceDir() + "/tests/fuzz/regressions/" + GetParam().file;
  auto buf = llvm::MemoryBuffer::getFile(path);
  ASSERT_TRUE(bool(buf)) << path << ": " << buf.getError().message();
  llvm::StringRef file = GetParam().file, bytes = (*buf)->getBuffer();
  std::string err = file.ends_with(".txt")  ? graphTextError(bytes)
                    : file.ends_with(".ir") ? irTextError(bytes)
                    : file.ends_with(".pb") ? tensorProtoError(bytes)
                                            : pipelineError(bytes);
  EXPECT_NE(err.find(GetParam().expect), std::string::npos)
      << "error: '" << err << "'";
}

INSTANTIATE_TEST_SUITE_P(Found, FuzzRegressionTest,
                         ::testing::ValuesIn(kRegressions),
                         [](const auto &info) {
                           std::string n = info.param.file;
                           n = n.substr(0, n.find('.'));
                           for (char &c : n)
                             if (!isalnum(c))
                               c = '_';
                           return n;
                         });

// The taps of a pooling window below a bound (finding 30): an axis of one
// tap whatever its dilation, and the usual counts.
TEST(FuzzRegression, PoolTapsWithAnyDilation) {
  const dim_t huge = std::numeric_limits<dim_t>::max();
  EXPECT_EQ(interp::tapsBelow(4, 0, huge, 1), 1);
  EXPECT_EQ(interp::tapsBelow(4, 3, huge, 2), 1);
  EXPECT_EQ(interp::tapsBelow(4, 4, huge, 1), 0);
  EXPECT_EQ(interp::tapsBelow(0, -3, huge, 5), 1); // taps left of the input
  EXPECT_EQ(interp::tapsBelow(4, 0, 2, 3), 2);     // taps 0 and 2
  EXPECT_EQ(interp::tapsBelow(5, 0, 2, 3), 3);
  EXPECT_EQ(interp::tapsBelow(4, 1, 1, 9), 3);
  EXPECT_EQ(interp::tapsBelow(4, 6, 1, 2), 0);
}
