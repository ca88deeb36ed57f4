//===- ImportSignal.cpp - Window functions and Einsum ---------------------===//
//
// HannWindow, HammingWindow and BlackmanWindow become constants (their
// size is a constant input). DFT is a product with a constant matrix of
// cosines and sines (O(n^2) per row: the signals of models are short). Einsum
// is composed: each operand's repeated letters become a diagonal (mask and
// sum), operands are laid out over all letters and multiplied with
// broadcasting, the letters missing from the output are summed, and the result
// is transposed to the output order.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"
#include "ProtoTensor.h"

#include "ember/Base/ElemAccess.h"

#include <cmath>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N).
template <int Kind>
llvm::Error importWindow(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(int64_t size, constantScalarInt(ctx, node, 0));
  AttrReader attrs(node);
  TRY(int64_t periodic, attrs.getInt("periodic", 1));
  TRY(int64_t dtype, attrs.getInt("output_datatype", 1));
  TRY(ElemKind kind,
      elemKindFromONNX(int32_t(dtype), ImportContext::describe(node)));
  // The window is computed at import, one cosine per point.
  if (size < 1 || size > kMaxFoldElements)
    return fail(node,
                "size must be in [1, " + llvm::Twine(kMaxFoldElements) + "]");
  static const double kCoeffs[3][3] = {
      {0.5, 0.5, 0.0}, {25.0 / 46, 21.0 / 46, 0.0}, {0.42, 0.5, 0.08}};
  const double *a = kCoeffs[Kind];
  double n1 = periodic ? double(size) : double(size - 1);
  Tensor t(kind, {size});
  for (int64_t i = 0; i < size; ++i) {
    double x = 2 * M_PI * double(i) / n1;
    storeElement(t.data(), kind, i,
                 a[0] - a[1] * std::cos(x) + a[2] * std::cos(2 * x));
  }
  return ctx.setOutput(node,
                       ctx.module().createConstant(nameOf(node), std::move(t)));
}

/// The matrix of DFT \p inverse mapping \p n samples of \p comps
/// components (real, or real and imaginary) to \p bins bins of (real,
/// imaginary) at length \p len: row n * comps + c, column k * 2 + o.
/// Samples at or beyond \p len are dropped; missing ones are zeros.
Tensor dftMatrix(int64_t n, int64_t comps, int64_t bins, int64_t len,
                 bool inverse) {
  Tensor w(ElemKind::Float32, {n * comps, bins * 2});
  float *p = reinterpret_cast<float *>(w.data());
  std::fill(p, p + w.size(), 0.f);
  double sign = inverse ? 1 : -1, scale = inverse ? 1.0 / double(len) : 1;
  for (int64_t i = 0; i < std::min(n, len); ++i)
    for (int64_t k = 0; k < bins; ++k) {
      // Reduced modulo len so that the angle stays small and exact.
      double a = 2 * M_PI * double((i * k) % len) / double(len);
      double c = std::cos(a) * scale, sn = sign * std::sin(a) * scale;
      float *re = p + (i * comps) * bins * 2 + k * 2;
      re[0] = float(c), re[1] = float(sn);
      if (comps == 2) {
        float *im = re + bins * 2;
        im[0] = float(-sn), im[1] = float(c);
      }
    }
  return w;
}

/// DFT of opset 17-19 (axis an attribute) and 20 (axis an input): the
/// signal's axis is moved next to the component dim, and each row of
/// (sample, component) pairs multiplies a constant DFT matrix.
llvm::Error importDFT(ImportContext &ctx, const onnx::NodeProto &node) {
  AttrReader attrs(node);
  TRY(int64_t inverse, attrs.getInt("inverse", 0));
  TRY(int64_t onesided, attrs.getInt("onesided", 0));
  TRY(NodeValue x, ctx.input(node, 0));
  int64_t rank = x.dims().size(), comps = rank ? x.dims().back() : 0;
  if (rank < 3 || (comps != 1 && comps != 2) ||
      x.getElemKind() != ElemKind::Float32)
    return fail(node, "the signal must be float [batch, ..., n, 1 or 2]");
  int64_t axis = 1;
  if (ctx.opset() >= 20) {
    TRY(Ints a, optionalInts(ctx, node, 2, Ints{-2}));
    axis = a.empty() ? -2 : a[0];
  } else {
    TRY(axis, attrs.getInt("axis", 1));
  }
  TRY(axis, normAxis(node, axis, rank));
  if (axis == 0 || axis == rank - 1)
    return fail(node, "the axis must be a signal axis, not the batch or the "
                      "component axis");
  int64_t n = x.dims()[axis], len = n;
  if (ctx.hasInput(node, 1)) {
    TRY(len, constantScalarInt(ctx, node, 1));
  }
  if (len < 1)
    return fail(node, "dft_length must be positive");
  if (onesided && (inverse || comps == 2))
    return fail(node, "onesided applies to the forward DFT of a real signal");
  int64_t bins = onesided ? len / 2 + 1 : len;
  // The DFT matrix is computed at import, one sine and cosine per entry.
  if (bins > kMaxFoldElements / (std::max<int64_t>(n, 1) * comps * 2))
    return fail(node, "the DFT matrix of " + llvm::Twine(n) + " samples and " +
                          llvm::Twine(bins) + " bins has more than " +
                          llvm::Twine(kMaxFoldElements) + " entries");
  // [others..., n, comps], flattened to rows of n * comps.
  Ints perm, back(rank), mid;
  for (int64_t d = 0; d < rank - 1; ++d)
    if (d != axis)
      perm.push_back(d);
  perm.push_back(axis);
  perm.push_back(rank - 1);
  for (int64_t d = 0; d < rank; ++d)
    back[perm[d]] = d;
  auto t = ctx.fn().tryCreateTranspose(nameOf(node), x, perm);
  if (!t)
    return fail(node, errorToString(t.takeError()));
  int64_t rows = 1;
  for (int64_t d = 0; d < rank - 2; ++d) {
    mid.push_back(x.dims()[perm[d]]);
    rows *= mid.back();
  }
  TRY(NodeValue flat, reshapeTo(ctx, node, NodeValue(*t), {rows, n * comps}));
  NodeValue w = ctx.module().createConstant(
      nameOf(node) + ".dft", dftMatrix(n, comps, bins, len, inverse));
  AttrList plain = {Attr::makeInt(0),
                    Attr::makeInt(int64_t(FusedActivation::None)),
                    Attr::makeFloat(0), Attr::makeFloat(0)};
  TRY(NodeValue y, make(ctx, node, OpKind::MatMul, {flat, w}, plain));
  mid.push_back(bins);
  mid.push_back(2);
  TRY(y, reshapeTo(ctx, node, y, mid));
  auto u = ctx.fn().tryCreateTranspose(nameOf(node), y, back);
  if (!u)
    return fail(node, errorToString(u.takeError()));
  return ctx.setOutput(node, NodeValue(*u));
}

/// Ones where the index along dim \p p equals the one along dim \p q, in
/// \p x's kind, shaped to broadcast against \p x (rank \p rank). An
/// n x n constant while small, else two iotas compared in the graph.
llvm::Expected<NodeValue> diagonalMask(ImportContext &ctx,
                                       const onnx::NodeProto &node, NodeValue x,
                                       size_t rank, size_t p, size_t q) {
  int64_t n = x.dims()[p];
  Ints shape(rank, 1);
  shape[p] = shape[q] = n;
  if (n > 0 && n > kMaxFoldElements / n) {
    Ints rowShape(rank, 1), colShape(rank, 1);
    rowShape[p] = colShape[q] = n;
    TRY(NodeValue rows, iotaConstant(ctx, node, n, rowShape));
    TRY(NodeValue cols, iotaConstant(ctx, node, n, colShape));
    TRY(NodeValue eq, binary(ctx, node, OpKind::Equal, rows, cols));
    return castTo(ctx, node, eq, x.getElemKind());
  }
  Tensor eye(x.getElemKind(), shape);
  for (int64_t i = 0; i < n; ++i) {
    Ints c(rank, 0);
    c[p] = c[q] = i;
    int64_t flat = 0;
    for (size_t k = 0; k < shape.size(); ++k)
      flat = flat * shape[k] + c[k];
    storeElement(eye.data(), eye.getElemKind(), flat, 1.0);
  }
  return NodeValue(
      ctx.module().createConstant(nameOf(node) + ".eye", std::move(eye)));
}

/// Replaces operand letters that repeat by their diagonal.
llvm::Expected<NodeValue> takeDiagonals(ImportContext &ctx,
                                        const onnx::NodeProto &node,
                                        NodeValue x, std::string &letters) {
  for (size_t p = 0; p < letters.size(); ++p)
    for (size_t q = p + 1; q < letters.size(); ++q) {
      if (letters[p] != letters[q])
        continue;
      int64_t n = x.dims()[p];
      if (x.dims()[q] != n)
        return fail(node, "repeated subscript with different sizes");
      TRY(NodeValue mask, diagonalMask(ctx, node, x, letters.size(), p, q));
      TRY(x, binary(ctx, node, OpKind::Mul, x, mask));
      TRY(x, reduce(ctx, node, OpKind::ReduceSum, x, {int64_t(q)}, false));
      letters.erase(q, 1);
      --q;
    }
  return x;
}

/// Sums the letters of \p all missing from \p out and transposes the rest
/// into \p out's order.
llvm::Expected<NodeValue> sumAndOrder(ImportContext &ctx,
                                      const onnx::NodeProto &node,
                                      NodeValue acc, const std::string &all,
                                      const std::string &out) {
  Ints summed;
  std::string keptLetters;
  for (size_t k = 0; k < all.size(); ++k) {
    if (out.find(all[k]) == std::string::npos) {
      summed.push_back(k);
    } else {
      keptLetters += all[k];
    }
  }
  TRY(acc, reduce(ctx, node, OpKind::ReduceSum, acc, summed, false));
  Ints perm;
  for (char ch : out) {
    size_t at = keptLetters.find(ch);
    if (at == std::string::npos)
      return fail(node, "output subscript '" + llvm::Twine(ch) +
                            "' is not in the inputs");
    perm.push_back(at);
  }
  if (perm.size() > 1) {
    auto t = ctx.fn().tryCreateTranspose(nameOf(node), acc, perm);
    if (!t)
      return fail(node, errorToString(t.takeError()));
    acc = NodeValue(*t);
  }
  return acc;
}

llvm::Error importEinsum(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(std::string eq, AttrReader(node).getString("equation", std::nullopt));
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  if (eq.find("...") != std::string::npos)
    return fail(node, "ellipsis in the equation is not supported");
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  llvm::SmallVector<llvm::StringRef, 4> parts;
  llvm::StringRef(lhs).split(parts, ',');
  for (llvm::StringRef p : parts)
    terms.push_back(p.str());
  if (int(terms.size()) != node.input_size())
    return fail(node, "the equation does not match the inputs");
  std::string out, all;
  for (const std::string &t : terms)
    for (char ch : t)
      if (all.find(ch) == std::string::npos)
        all += ch;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
  } else { // Implicit output: letters used once, in alphabetical order.
    for (char ch : all)
      if (std::count(lhs.begin(), lhs.end(), ch) == 1)
        out += ch;
    std::sort(out.begin(), out.end());
  }
  if (all.size() > kMaxRank)
    return fail(node, "more than " + llvm::Twine(kMaxRank) + " subscripts");
  NodeValue acc;
  Ints full(all.size(), 1);
  for (size_t i = 0; i < terms.size(); ++i) {
    TRY(NodeValue x, ctx.input(node, i));
    if (terms[i].size() != x.dims().size())
      return fail(node, "subscripts do not match the rank of input " +
                            llvm::Twine(i));
    TRY(x, takeDiagonals(ctx, node, x, terms[i]));
    // Transpose to the global letter order, then insert unit dims.
    Ints perm, shape;
    for (char ch : all) {
      size_t at = terms[i].find(ch);
      if (at != std::string::npos) {
        perm.push_back(at);
        full[all.find(ch)] = x.dims()[at];
      }
    }
    auto t = ctx.fn().tryCreateTranspose(nameOf(node), x, perm);
    if (!t)
      return fail(node, errorToString(t.takeError()));
    for (char ch : all) {
      size_t at = terms[i].find(ch);
      shape.push_back(at == std::string::npos ? 1 : x.dims()[at]);
    }
    TRY(x, reshapeTo(ctx, node, NodeValue(*t), shape));
    if (!acc) {
      acc = x;
    } else {
      TRY(acc, binary(ctx, node, OpKind::Mul, acc, x));
    }
  }
  TRY(acc, ctx.broadcastTo(node, acc, full));
  TRY(acc, sumAndOrder(ctx, node, acc, all, out));
  return ctx.setOutput(node, acc);
}

const ImportRule kSignalRules[] = {
    {"HannWindow", 17, 17, importWindow<0>},
    {"HammingWindow", 17, 17, importWindow<1>},
    {"BlackmanWindow", 17, 17, importWindow<2>},
    {"Einsum", 12, 17, importEinsum},
    {"DFT", 17, 20, importDFT},
};

} // namespace

RuleList onnximport::getSignalImportRules() { return kSignalRules; }
