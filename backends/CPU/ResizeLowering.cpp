//===- ResizeLowering.cpp - Resize of the last two dims as libjit calls ---===//
//
// A float32 Resize that keeps every dim but the last two (NCHW upsampling
// in segmentation heads and feature pyramids) resizes each plane alike:
// the taps of each output row and column (input offsets and Float64
// weights, from resizeTapsAt as the Interpreter computes them) become
// constant tables at compile time, and one call of libjit's
// ember_resize_plane_f32 (Resize.inc) per plane, in a parallel loop, sums
// them. The generic loop nest recomputed every tap of every element.
//
//===----------------------------------------------------------------------===//

#include "CPU.h"
#include "LibCall.h"
#include "ember/Base/ResizeTaps.h"
#include "ember/Kernel/LowerToKernel.h"

using namespace ember;
using kir::Kernel;

namespace {
/// The taps of every output coordinate of one dim, each padded to the
/// dim's tap count.
struct TapTable {
  std::vector<int64_t> at; ///< Input index times \c unit.
  std::vector<double> w;
  int64_t taps = 0;
};
} // namespace

static std::optional<TapTable> tabulate(const ResizeRule &rule, int64_t in,
                                        int64_t out, double scale,
                                        int64_t unit) {
  TapTable t;
  for (int64_t o = 0; o < out; ++o) {
    ResizeTapList taps = resizeTapsAt(rule, o, in, out, scale);
    if (o == 0)
      t.taps = int64_t(taps.size());
    if (int64_t(taps.size()) != t.taps)
      return std::nullopt;
    for (auto &[i, w] : taps) {
      t.at.push_back(i * unit);
      t.w.push_back(w);
    }
  }
  return t;
}

std::optional<Kernel> cpu::lowerResizePlanes(const Instruction &I,
                                             const MemoryPlan &plan,
                                             std::vector<uint8_t> &constants) {
  auto *r = llvm::dyn_cast<ResizeInst>(&I);
  if (!r)
    return std::nullopt;
  TypeRef xt = r->getInput()->getType(), yt = r->getDest()->getType();
  size_t rank = xt->rank();
  auto scales = r->getScales();
  if (xt->getElemKind() != ElemKind::Float32 ||
      yt->getElemKind() != ElemKind::Float32 || rank < 2 || yt->size() == 0 ||
      r->getCoordMode() == 4)
    return std::nullopt;
  for (size_t d = 0; d + 2 < rank; ++d)
    if (xt->dims()[d] != yt->dims()[d] || scales[d] != 1.f)
      return std::nullopt;
  int64_t H = xt->dims()[rank - 2], W = xt->dims()[rank - 1];
  int64_t OH = yt->dims()[rank - 2], OW = yt->dims()[rank - 1];
  ResizeRule rule{r->getMode(), r->getCoordMode(), r->getNearestMode(),
                  r->getCubicCoeff(), r->getExcludeOutside() != 0};
  auto rows = tabulate(rule, H, OH, double(scales[rank - 2]), W);
  auto cols = tabulate(rule, W, OW, double(scales[rank - 1]), 1);
  // ember_resize_plane_f32 has 1, 2 or 4 taps per dim, the same count
  // along both unless one dim keeps its size (1 tap).
  if (!rows || !cols ||
      (rows->taps != cols->taps && rows->taps != 1 && cols->taps != 1))
    return std::nullopt;
  auto table = [&](const auto &v, const std::string &what, ElemKind kind) {
    return appendConstant(constants, v.data(), v.size() * sizeof(v[0]),
                          (I.getName() + what).str(), kind);
  };
  Kernel k(I.getName());
  unsigned y = k.addBuffer(kir::bufferFor(r->getDest(), plan));
  unsigned x = k.addBuffer(kir::bufferFor(r->getInput(), plan));
  unsigned ra = k.addBuffer(table(rows->at, ".rows", ElemKind::Int64));
  unsigned rw = k.addBuffer(table(rows->w, ".rowW", ElemKind::Float64));
  unsigned ca = k.addBuffer(table(cols->at, ".cols", ElemKind::Int64));
  unsigned cw = k.addBuffer(table(cols->w, ".colW", ElemKind::Float64));
  unsigned p = k.newVar();
  std::vector<kir::CallArg> args = {bufArg(y, k.mul(k.var(p), OH * OW)),
                                    bufArg(x, k.mul(k.var(p), H * W)),
                                    bufArg(ra),
                                    bufArg(rw),
                                    bufArg(ca),
                                    bufArg(cw),
                                    valArg(k.constInt(OH)),
                                    valArg(k.constInt(OW)),
                                    valArg(k.constInt(rows->taps)),
                                    valArg(k.constInt(cols->taps))};
  k.body() = {Kernel::loop(
      p, int64_t(yt->size()) / (OH * OW),
      /*parallel=*/true, {EMBER_LIBJIT_CALL(k, ember_resize_plane_f32, args)})};
  return k;
}
