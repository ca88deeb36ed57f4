//===- ImportRandom.cpp - Random ops as constants drawn at compile time ---===//
//
// RandomUniform, RandomNormal, their *Like forms and Bernoulli draw their
// values when the model is compiled, from Ember's own generator seeded by
// the node's `seed` attribute (0 when absent): a bundle returns the same
// values on every call and every compile of the same model, and not the
// values another runtime's generator draws (docs/onnx-support.md). The
// sizes are static, so the draws are constants; Bernoulli compares its
// run-time probabilities with constant uniform draws.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"
#include "ProtoTensor.h"

#include "ember/Base/ElemAccess.h"

#include "llvm/ADT/bit.h"

#include <cmath>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// splitmix64: a 64-bit state stepped by a constant and mixed; every seed
/// gives a full-period sequence.
class Draws {
public:
  explicit Draws(float seed) : state_(llvm::bit_cast<uint32_t>(seed)) {}

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

/// A Constant of \p kind and \p dims drawn from \p law with the node's
/// attributes (low/high or mean/scale, seed).
llvm::Expected<NodeValue> drawConstant(ImportContext &ctx,
                                       const onnx::NodeProto &node, Law law,
                                       ElemKind kind,
                                       llvm::ArrayRef<dim_t> dims) {
  if (!isFloatKind(kind))
    return fail(node, "dtype must be a float type");
  AttrReader attrs(node);
  TRY(float seed, attrs.getFloat("seed", 0.f));
  bool uniform = law == Law::Uniform;
  TRY(float a, attrs.getFloat(uniform ? "low" : "mean", 0.f));
  TRY(float b, attrs.getFloat(uniform ? "high" : "scale", 1.f));
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
                 uniform ? a + (double(b) - a) * draws.uniform()
                         : a + double(b) * draws.normal());
  return NodeValue(ctx.module().createConstant(nameOf(node), std::move(t)));
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

const ImportRule kRandomRules[] = {
    {"RandomUniform", 1, 17, importRandom<Law::Uniform>},
    {"RandomNormal", 1, 17, importRandom<Law::Normal>},
    {"RandomUniformLike", 1, 17, importRandomLike<Law::Uniform>},
    {"RandomNormalLike", 1, 17, importRandomLike<Law::Normal>},
    {"Bernoulli", 15, 17, importBernoulli},
};

} // namespace

RuleList onnximport::getRandomImportRules() { return kRandomRules; }
