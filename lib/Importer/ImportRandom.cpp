//===- ImportRandom.cpp - Random ops as constants drawn at compile time ---===//
//
// RandomUniform, RandomNormal, their *Like forms and Bernoulli draw their
// values when the model is compiled, from Ember's own generator seeded by
// the node's `seed` attribute (0 when absent): a bundle returns the same
// values on every call and every compile of the same model, and not the
// values another runtime's generator draws (docs/onnx-support.md). The
// sizes are static, so the draws are constants; Bernoulli compares its
// run-time probabilities with constant uniform draws, and Dropout in
// training mode its run-time ratio.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"
#include "ProtoTensor.h"

#include "ember/Base/ElemAccess.h"

#include "llvm/ADT/bit.h"

#include <cmath>
#include <optional>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// splitmix64: a 64-bit state stepped by a constant and mixed; every seed
/// gives a full-period sequence.
class Draws {
public:
  explicit Draws(uint64_t seed) : state_(seed) {}

  /// Uniform in [0, 1), 53 random bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }

  /// Standard normal (Box-Muller; 1 - u keeps the logarithm finite).
  double normal() {
    double r = std::sqrt(-2.0 * std::log(1.0 - uniform()));
    return r * std::cos(2.0 * M_PI * uniform());
  }

private:
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

enum class Law { Uniform, Normal };

/// A Constant of \p kind and \p dims drawn from \p law with parameters
/// \p a and \p b (low/high or mean/scale) from the generator seeded \p seed.
llvm::Expected<NodeValue> drawConstant(ImportContext &ctx,
                                       const onnx::NodeProto &node, Law law,
                                       ElemKind kind,
                                       llvm::ArrayRef<dim_t> dims, double a,
                                       double b, uint64_t seed) {
  if (!isFloatKind(kind))
    return fail(node, "dtype must be a float type");
  int64_t n = 1;
  for (dim_t d : dims) {
    if (d < 0 || (d > 0 && n > kMaxFoldElements / d))
      return fail(node, "the shape must have dims >= 0 and at most " +
                            llvm::Twine(kMaxFoldElements) + " elements");
    n *= d;
  }
  Draws draws(seed);
  Tensor t(kind, dims);
  for (int64_t i = 0; i < n; ++i)
    storeElement(t.data(), kind, i,
                 law == Law::Uniform ? a + (b - a) * draws.uniform()
                                     : a + b * draws.normal());
  return NodeValue(ctx.module().createConstant(nameOf(node), std::move(t)));
}

/// drawConstant with the node's attributes (low/high or mean/scale; the
/// float `seed`, whose bits seed the generator).
llvm::Expected<NodeValue> drawConstant(ImportContext &ctx,
                                       const onnx::NodeProto &node, Law law,
                                       ElemKind kind,
                                       llvm::ArrayRef<dim_t> dims) {
  AttrReader attrs(node);
  TRY(float seed, attrs.getFloat("seed", 0.f));
  bool uniform = law == Law::Uniform;
  TRY(float a, attrs.getFloat(uniform ? "low" : "mean", 0.f));
  TRY(float b, attrs.getFloat(uniform ? "high" : "scale", 1.f));
  return drawConstant(ctx, node, law, kind, dims, a, b,
                      llvm::bit_cast<uint32_t>(seed));
}

template <Law L>
llvm::Error importRandom(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(std::vector<int64_t> shape,
      AttrReader(node).getInts("shape", std::nullopt));
  TRY(ElemKind kind, dtypeOr(node, ElemKind::Float32));
  llvm::SmallVector<dim_t, 4> dims(shape.begin(), shape.end());
  TRY(NodeValue y, drawConstant(ctx, node, L, kind, dims));
  return ctx.setOutput(node, y);
}

template <Law L>
llvm::Error importRandomLike(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(ElemKind kind, dtypeOr(node, x.getElemKind()));
  TRY(NodeValue y, drawConstant(ctx, node, L, kind, x.getType()->dims()));
  return ctx.setOutput(node, y);
}

/// y = (u < p) for a uniform draw u per element, as dtype (p's kind
/// without one).
llvm::Error importBernoulli(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue p, ctx.input(node, 0));
  if (!isFloatKind(p.getElemKind()))
    return fail(node, "the probabilities must be a float type");
  TRY(ElemKind kind, dtypeOr(node, p.getElemKind()));
  TRY(NodeValue u, drawConstant(ctx, node, Law::Uniform, p.getElemKind(),
                                p.getType()->dims()));
  TRY(NodeValue hit, binary(ctx, node, OpKind::Less, u, p));
  TRY(NodeValue y, castTo(ctx, node, hit, kind));
  return ctx.setOutput(node, y);
}

/// The value of scalar input \p i: \p absent without the input, nothing
/// when it is fed at run time.
llvm::Expected<std::optional<double>> constantOrFed(ImportContext &ctx,
                                                    const onnx::NodeProto &node,
                                                    int i, double absent) {
  if (!ImportContext::hasInput(node, i))
    return absent;
  TRY(NodeValue v, ctx.input(node, i));
  if (!llvm::isa<Constant>(v.getNode()))
    return std::nullopt;
  TRY(double d, constantScalar(ctx, node, i));
  return d;
}

/// Input \p i (a scalar) as Float32, or the constant \p absent without it.
llvm::Expected<NodeValue> scalarF32(ImportContext &ctx,
                                    const onnx::NodeProto &node, int i,
                                    double absent) {
  if (!ImportContext::hasInput(node, i))
    return constantOf(ctx, node, ElemKind::Float32, {}, absent);
  TRY(NodeValue v, ctx.input(node, i));
  if (v.getType()->size() != 1)
    return fail(node, "input " + llvm::Twine(i) + " must be a scalar");
  TRY(v, reshapeTo(ctx, node, v, {}));
  return castTo(ctx, node, v, ElemKind::Float32);
}

/// Dropout. Out of training mode (and in it with a constant ratio of 0,
/// what exporters write for disabled dropout) it is the identity with an
/// all-true mask. In training mode element i is kept where a uniform draw
/// u_i from the generator seeded by the integer `seed` is >= the ratio:
/// mask = keep, y = keep ? x / (1 - ratio) : 0. A ratio or training_mode
/// fed at run time is a graph value: the effective ratio is ratio *
/// training_mode, and 0 keeps every element and divides by 1, so one graph
/// serves both modes and every ratio.
llvm::Error importDropoutAny(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  TRY(std::optional<double> training, constantOrFed(ctx, node, 2, 0));
  TRY(std::optional<double> ratio, constantOrFed(ctx, node, 1, 0.5));
  if (training && (*training == 0 || (ratio && *ratio == 0))) {
    bindOutput(ctx, node, 0, x);
    if (node.output_size() > 1 && !node.output(1).empty())
      bindOutput(ctx, node, 1,
                 constantOf(ctx, node, ElemKind::Bool, x.dims(), 1.0));
    return llvm::Error::success();
  }
  if (!isFloatKind(x.getElemKind()))
    return fail(node, "the data must be a float type");
  TRY(NodeValue r, scalarF32(ctx, node, 1, 0.5));
  if (!training) {
    TRY(NodeValue t, scalarF32(ctx, node, 2, 0));
    TRY(r, binary(ctx, node, OpKind::Mul, r, t));
  }
  TRY(int64_t seed, AttrReader(node).getInt("seed", 0));
  TRY(NodeValue u, drawConstant(ctx, node, Law::Uniform, ElemKind::Float32,
                                x.dims(), 0, 1, uint64_t(seed)));
  TRY(NodeValue keep, binary(ctx, node, OpKind::GreaterOrEqual, u, r));
  NodeValue one = constantOf(ctx, node, ElemKind::Float32, {}, 1.0);
  TRY(NodeValue scale, binary(ctx, node, OpKind::Sub, one, r));
  TRY(scale, binary(ctx, node, OpKind::Div, one, scale));
  TRY(scale, castTo(ctx, node, scale, x.getElemKind()));
  TRY(NodeValue scaled, binary(ctx, node, OpKind::Mul, x, scale));
  NodeValue zero = constantOf(ctx, node, x.getElemKind(), x.dims(), 0.0);
  TRY(NodeValue y, make(ctx, node, OpKind::Where, {keep, scaled, zero}));
  bindOutput(ctx, node, 0, y);
  bindOutput(ctx, node, 1, keep);
  return llvm::Error::success();
}

const ImportRule kRandomRules[] = {
    {"RandomUniform", 1, 17, importRandom<Law::Uniform>},
    {"RandomNormal", 1, 17, importRandom<Law::Normal>},
    {"RandomUniformLike", 1, 17, importRandomLike<Law::Uniform>},
    {"RandomNormalLike", 1, 17, importRandomLike<Law::Normal>},
    {"Bernoulli", 15, 17, importBernoulli},
    {"Dropout", 1, 17, importDropoutAny},
};

} // namespace

RuleList onnximport::getRandomImportRules() { return kRandomRules; }
