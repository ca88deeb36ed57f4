//===- ImportEinsum.cpp - Einsum as products the backends run fast --------===//
//
// An operand's repeated letters become its diagonal (mask and sum) and
// letters that no later operand or the output needs are summed away first.
// Float operands are then contracted pairwise, left to right, each pair as
// one MatMul: the letters both operands share and a later step needs are
// batch dims, the shared ones nothing needs are the contracted K, the rest
// are M and N. That is how attention exports written with einsum
// ("bhid,bhjd->bhij") reach the GEMM kernels instead of a broadcast product
// of all letters and a ReduceSum. Other element types, and a contracted
// letter one operand broadcasts (size 1 against n), take the general form:
// operands laid out over all letters, multiplied with broadcasting, summed
// and transposed. "..." stands for the leading dims each operand has beyond
// its letters, aligned from the right as in broadcasting.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"
#include "ProtoTensor.h"

#include "ember/Base/ElemAccess.h"

#include <optional>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// An operand (or an intermediate result) and the letter of each dim.
struct Operand {
  NodeValue v;
  std::string letters;
};

/// The parsed equation: one letter string per input and the output's.
/// "..." is replaced by digits '0'.. (never subscripts), the last of them
/// for an operand's last ellipsis dim.
struct Equation {
  std::vector<std::string> terms;
  std::string out;
};

/// Replaces "..." in \p term (of an operand of \p rank) by its digits, the
/// ellipsis being \p width dims wide in all.
llvm::Expected<std::string> expandEllipsis(const onnx::NodeProto &node,
                                           std::string term, int64_t rank,
                                           int64_t width) {
  size_t at = term.find("...");
  if (at == std::string::npos)
    return term;
  int64_t own = rank - int64_t(term.size() - 3);
  if (own < 0 || own > width)
    return fail(node, "'...' does not match the rank of an input");
  std::string digits;
  for (int64_t d = width - own; d < width; ++d)
    digits += char('0' + d);
  return term.replace(at, 3, digits);
}

llvm::Expected<Equation> parseEquation(const onnx::NodeProto &node,
                                       std::string eq,
                                       llvm::ArrayRef<NodeValue> ins) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  size_t arrow = eq.find("->");
  Equation e;
  // parts refer into lhs, which must outlive them.
  std::string lhs = eq.substr(0, arrow);
  llvm::SmallVector<llvm::StringRef, 4> parts;
  llvm::StringRef(lhs).split(parts, ',');
  if (parts.size() != ins.size())
    return fail(node, "the equation does not match the inputs");
  int64_t width = 0;
  for (size_t i = 0; i < parts.size(); ++i)
    if (parts[i].contains("..."))
      width = std::max<int64_t>(width, int64_t(ins[i].dims().size()) -
                                           int64_t(parts[i].size() - 3));
  if (width > kMaxRank)
    return fail(node, "'...' does not match the rank of an input");
  for (size_t i = 0; i < parts.size(); ++i) {
    TRY(std::string t,
        expandEllipsis(node, parts[i].str(), ins[i].dims().size(), width));
    for (char ch : t)
      if (!std::isalpha(ch) && !std::isdigit(ch))
        return fail(node, "bad subscript '" + llvm::Twine(ch) + "'");
    if (t.size() != ins[i].dims().size())
      return fail(node, "subscripts do not match the rank of input " +
                            llvm::Twine(i));
    e.terms.push_back(t);
  }
  if (arrow != std::string::npos) {
    std::string out = eq.substr(arrow + 2);
    int64_t letters =
        int64_t(out.size()) - (out.find("...") == std::string::npos ? 0 : 3);
    TRY(e.out, expandEllipsis(node, out, width + letters, width));
    return e;
  }
  // Implicit output: the ellipsis, then the letters used once, sorted.
  std::string all, once;
  for (const std::string &t : e.terms)
    all += t;
  for (int64_t d = 0; d < width; ++d)
    e.out += char('0' + d);
  for (char ch : all)
    if (std::isalpha(ch) && std::count(all.begin(), all.end(), ch) == 1)
      once += ch;
  std::sort(once.begin(), once.end());
  e.out += once;
  return e;
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
      if (x.dims()[q] != x.dims()[p])
        return fail(node, "repeated subscript with different sizes");
      TRY(NodeValue mask, diagonalMask(ctx, node, x, letters.size(), p, q));
      TRY(x, binary(ctx, node, OpKind::Mul, x, mask));
      TRY(x, reduce(ctx, node, OpKind::ReduceSum, x, {int64_t(q)}, false));
      letters.erase(q, 1);
      --q;
    }
  return x;
}

/// \p x transposed so that its letters read \p order (a permutation).
llvm::Expected<NodeValue> permuteTo(ImportContext &ctx,
                                    const onnx::NodeProto &node,
                                    const Operand &x,
                                    const std::string &order) {
  Ints perm;
  bool identity = true;
  for (char ch : order) {
    perm.push_back(x.letters.find(ch));
    identity &= perm.back() == int64_t(perm.size() - 1);
  }
  if (identity)
    return x.v;
  auto t = ctx.fn().tryCreateTranspose(nameOf(node), x.v, perm);
  if (!t)
    return fail(node, errorToString(t.takeError()));
  return NodeValue(*t);
}

/// Sums the letters of \p x that \p keep does not hold.
llvm::Expected<Operand> sumAllBut(ImportContext &ctx,
                                  const onnx::NodeProto &node, Operand x,
                                  llvm::StringRef keep) {
  Ints axes;
  std::string kept;
  for (size_t k = 0; k < x.letters.size(); ++k) {
    if (keep.contains(x.letters[k]))
      kept += x.letters[k];
    else
      axes.push_back(k);
  }
  if (axes.empty())
    return x;
  TRY(x.v, reduce(ctx, node, OpKind::ReduceSum, x.v, axes, false));
  x.letters = kept;
  return x;
}

/// The size of \p x's dim \p ch.
int64_t sizeOf(const Operand &x, char ch) {
  return x.v.dims()[x.letters.find(ch)];
}

/// a x b as one MatMul keeping the letters \p needed names (and summing
/// the rest), or nullopt when a contracted letter broadcasts.
llvm::Expected<std::optional<Operand>>
contractByMatMul(ImportContext &ctx, const onnx::NodeProto &node, Operand a,
                 Operand b, const std::string &needed) {
  TRY(a, sumAllBut(ctx, node, a, b.letters + needed));
  TRY(b, sumAllBut(ctx, node, b, a.letters + needed));
  std::string batch, left, contracted, right;
  for (char ch : a.letters) {
    bool shared = b.letters.find(ch) != std::string::npos;
    if (shared && needed.find(ch) != std::string::npos)
      batch += ch;
    else if (shared)
      contracted += ch;
    else
      left += ch;
  }
  for (char ch : b.letters)
    if (a.letters.find(ch) == std::string::npos)
      right += ch;
  for (char ch : contracted)
    if (sizeOf(a, ch) != sizeOf(b, ch))
      return std::nullopt;
  Ints aShape, bShape, outShape;
  for (char ch : batch) {
    aShape.push_back(sizeOf(a, ch));
    bShape.push_back(sizeOf(b, ch));
    outShape.push_back(std::max(aShape.back(), bShape.back()));
  }
  int64_t m = 1, k = 1, n = 1;
  for (char ch : left)
    outShape.push_back(sizeOf(a, ch)), m *= outShape.back();
  for (char ch : contracted)
    k *= sizeOf(a, ch);
  for (char ch : right)
    outShape.push_back(sizeOf(b, ch)), n *= outShape.back();
  aShape.insert(aShape.end(), {m, k});
  bShape.insert(bShape.end(), {k, n});
  TRY(NodeValue av, permuteTo(ctx, node, a, batch + left + contracted));
  TRY(NodeValue bv, permuteTo(ctx, node, b, batch + contracted + right));
  TRY(av, reshapeTo(ctx, node, av, aShape));
  TRY(bv, reshapeTo(ctx, node, bv, bShape));
  auto mm = ctx.fn().tryCreateMatMul(nameOf(node), av, bv, 0);
  if (!mm)
    return fail(node, errorToString(mm.takeError()));
  TRY(NodeValue y, reshapeTo(ctx, node, (*mm)->getResult(), outShape));
  return Operand{y, batch + left + right};
}

/// The general form: every operand laid out over all letters and
/// multiplied with broadcasting.
llvm::Expected<Operand> productByBroadcast(ImportContext &ctx,
                                           const onnx::NodeProto &node,
                                           llvm::ArrayRef<Operand> ops) {
  std::string all;
  for (const Operand &x : ops)
    for (char ch : x.letters)
      if (all.find(ch) == std::string::npos)
        all += ch;
  if (all.size() > kMaxRank)
    return fail(node, "more than " + llvm::Twine(kMaxRank) + " subscripts");
  Ints full(all.size(), 1);
  NodeValue acc;
  for (const Operand &x : ops) {
    std::string own;
    Ints shape;
    for (size_t k = 0; k < all.size(); ++k) {
      size_t at = x.letters.find(all[k]);
      if (at != std::string::npos) {
        own += all[k];
        full[k] = std::max<int64_t>(full[k], x.v.dims()[at]);
      }
      shape.push_back(at == std::string::npos ? 1 : x.v.dims()[at]);
    }
    TRY(NodeValue v, permuteTo(ctx, node, x, own));
    TRY(v, reshapeTo(ctx, node, v, shape));
    if (!acc) {
      acc = v;
    } else {
      TRY(acc, binary(ctx, node, OpKind::Mul, acc, v));
    }
  }
  TRY(acc, ctx.broadcastTo(node, acc, full));
  return Operand{acc, all};
}

/// Contracts \p ops left to right, by MatMul where every operand is float.
llvm::Expected<Operand> contractAll(ImportContext &ctx,
                                    const onnx::NodeProto &node,
                                    std::vector<Operand> ops,
                                    const std::string &out) {
  bool floats = llvm::all_of(ops, [](const Operand &x) {
    return x.v.getElemKind() == ElemKind::Float32;
  });
  Operand acc = ops[0];
  for (size_t i = 1; floats && i < ops.size(); ++i) {
    std::string needed = out;
    for (size_t j = i + 1; j < ops.size(); ++j)
      needed += ops[j].letters;
    TRY(std::optional<Operand> r,
        contractByMatMul(ctx, node, acc, ops[i], needed));
    if (!r) { // A broadcast contraction: the general form from here on.
      ops.erase(ops.begin(), ops.begin() + (i - 1));
      ops.front() = acc;
      return productByBroadcast(ctx, node, ops);
    }
    acc = *r;
  }
  if (ops.size() == 1 || floats)
    return acc;
  return productByBroadcast(ctx, node, ops);
}

llvm::Error importEinsum(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(std::string eq, AttrReader(node).getString("equation", std::nullopt));
  std::vector<NodeValue> ins;
  for (int i = 0; i < node.input_size(); ++i) {
    TRY(NodeValue x, ctx.input(node, i));
    ins.push_back(x);
  }
  if (ins.empty())
    return fail(node, "needs at least one input");
  TRY(Equation e, parseEquation(node, eq, ins));
  for (char ch : e.out)
    if (llvm::none_of(e.terms, [&](const std::string &t) {
          return t.find(ch) != std::string::npos;
        }))
      return fail(node, "output subscript '" + llvm::Twine(ch) +
                            "' is not in the inputs");
  std::vector<Operand> ops;
  for (size_t i = 0; i < ins.size(); ++i) {
    Operand x{ins[i], e.terms[i]};
    TRY(x.v, takeDiagonals(ctx, node, x.v, x.letters));
    ops.push_back(x);
  }
  TRY(Operand acc, contractAll(ctx, node, ops, e.out));
  TRY(acc, sumAllBut(ctx, node, acc, e.out));
  TRY(NodeValue y, permuteTo(ctx, node, acc, e.out));
  return ctx.setOutput(node, y);
}

const ImportRule kEinsumRules[] = {
    {"Einsum", 12, 17, importEinsum},
};

} // namespace

RuleList onnximport::getEinsumImportRules() { return kEinsumRules; }
