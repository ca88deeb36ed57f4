//===- ImportAttention.cpp - RotaryEmbedding and Attention (opset 23+) ----===//
//
// Both are composed of existing nodes. Attention becomes the chain the
// exporters of opset 17 wrote for scaled dot-product attention: the head
// split (Reshape, Transpose), MatMul(Q, Kᵀ), a Mul by the scale, an Add of
// the mask, a Where of the causal -inf, Softmax and MatMul by V, which
// fuse-softmax-mask and fuse-attention turn into one Attention node; the
// rows that see no key are zeroed after it, as the operator text asks.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"

#include "ember/Base/ElemAccess.h"

#include <cmath>
#include <limits>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// x [.., n] sliced on its last dim from \p start by \p step, \p count.
llvm::Expected<NodeValue> lastDimSlice(ImportContext &ctx,
                                       const onnx::NodeProto &node, NodeValue x,
                                       int64_t start, int64_t step,
                                       int64_t count) {
  size_t r = x.dims().size();
  Ints starts(r, 0), steps(r, 1), counts = dimsOf(x);
  starts[r - 1] = start;
  steps[r - 1] = step;
  counts[r - 1] = count;
  return sliceNode(ctx, node, x, starts, steps, counts);
}

/// The cos or sin table for \p x4 ([B,S,H,D] when \p seqFirst, else
/// [B,H,S,D]): cache[position_ids] or the cache itself, [B,S,half],
/// shaped to broadcast against the rotated half.
llvm::Expected<NodeValue> rotaryTable(ImportContext &ctx,
                                      const onnx::NodeProto &node, int i,
                                      NodeValue x4, bool seqFirst,
                                      int64_t half) {
  TRY(NodeValue t, ctx.input(node, i));
  int64_t b = x4.dims()[0], s = x4.dims()[seqFirst ? 1 : 2];
  if (ImportContext::hasInput(node, 3)) {
    TRY(NodeValue ids, ctx.input(node, 3));
    if (t.dims().size() != 2)
      return fail(node, "with position_ids, the caches must be 2-D, got " +
                            t.getType()->toString());
    TRY(t, make(ctx, node, OpKind::Gather, {t, ids}, {Attr::makeInt(0)}));
  }
  if (dimsOf(t) != Ints{b, s, half})
    return fail(node, "the cos/sin values must be [" + llvm::Twine(b) + ", " +
                          llvm::Twine(s) + ", " + llvm::Twine(half) +
                          "] (rotary_embedding_dim / 2 per position), got " +
                          t.getType()->toString());
  return reshapeTo(ctx, node, t,
                   seqFirst ? Ints{b, s, 1, half} : Ints{b, 1, s, half});
}

/// Rotates the first R dims of each head of X: the halves (or, interleaved,
/// the even and odd elements) x1, x2 become x1 cos - x2 sin and
/// x1 sin + x2 cos; the other dims pass through.
llvm::Error importRotary(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  AttrReader attrs(node);
  TRY(int64_t interleaved, attrs.getInt("interleaved", 0));
  TRY(int64_t rot, attrs.getInt("rotary_embedding_dim", 0));
  TRY(int64_t heads, attrs.getInt("num_heads", 0));
  Ints xd = dimsOf(x);
  bool seqFirst = xd.size() == 3;
  NodeValue x4 = x;
  if (seqFirst) {
    if (heads < 1 || xd[2] % heads)
      return fail(node, "a 3-D X needs num_heads dividing its last dim " +
                            llvm::Twine(xd[2]) + ", got " + llvm::Twine(heads));
    TRY(x4, reshapeTo(ctx, node, x, {xd[0], xd[1], heads, xd[2] / heads}));
  } else if (xd.size() != 4) {
    return fail(node, "X must be 3-D or 4-D, got " + x.getType()->toString());
  }
  int64_t d = x4.dims()[3];
  if (rot == 0)
    rot = d;
  if (rot < 2 || rot > d || rot % 2)
    return fail(node, "rotary_embedding_dim " + llvm::Twine(rot) +
                          " must be even and within the head size " +
                          llvm::Twine(d));
  int64_t half = rot / 2;
  TRY(NodeValue cos, rotaryTable(ctx, node, 1, x4, seqFirst, half));
  TRY(NodeValue sin, rotaryTable(ctx, node, 2, x4, seqFirst, half));
  TRY(NodeValue x1, lastDimSlice(ctx, node, x4, 0, interleaved ? 2 : 1, half));
  TRY(NodeValue x2, lastDimSlice(ctx, node, x4, interleaved ? 1 : half,
                                 interleaved ? 2 : 1, half));
  TRY(NodeValue a, binary(ctx, node, OpKind::Mul, cos, x1));
  TRY(NodeValue b, binary(ctx, node, OpKind::Mul, sin, x2));
  TRY(NodeValue real, make(ctx, node, OpKind::Sub, {a, b}));
  TRY(a, binary(ctx, node, OpKind::Mul, sin, x1));
  TRY(b, binary(ctx, node, OpKind::Mul, cos, x2));
  TRY(NodeValue imag, make(ctx, node, OpKind::Add, {a, b}));
  NodeValue y;
  if (interleaved) {
    Ints pair = dimsOf(real);
    pair.push_back(1);
    TRY(real, reshapeTo(ctx, node, real, pair));
    TRY(imag, reshapeTo(ctx, node, imag, pair));
    TRY(y, make(ctx, node, OpKind::Concat, {real, imag}, {Attr::makeInt(4)}));
    pair.pop_back();
    pair.back() = rot;
    TRY(y, reshapeTo(ctx, node, y, pair));
  } else {
    TRY(y, make(ctx, node, OpKind::Concat, {real, imag}, {Attr::makeInt(3)}));
  }
  if (rot < d) {
    TRY(NodeValue rest, lastDimSlice(ctx, node, x4, rot, 1, d - rot));
    TRY(y, make(ctx, node, OpKind::Concat, {y, rest}, {Attr::makeInt(3)}));
  }
  TRY(y, reshapeTo(ctx, node, y, xd));
  return ctx.setOutput(node, y);
}

/// v [B, S, H * D] as [B, H, S, D].
llvm::Expected<NodeValue> splitHeads(ImportContext &ctx,
                                     const onnx::NodeProto &node, NodeValue v,
                                     int64_t heads, const char *what) {
  Ints d = dimsOf(v);
  if (heads < 1 || d[2] % heads)
    return fail(node, llvm::Twine(what) + " " + v.getType()->toString() +
                          " does not split into " + llvm::Twine(heads) +
                          " heads");
  TRY(v, reshapeTo(ctx, node, v, {d[0], d[1], heads, d[2] / heads}));
  return make(ctx, node, OpKind::Transpose, {v},
              {Attr::makeInts({0, 2, 1, 3})});
}

/// Each of the KV heads of v [B, Hkv, T, D] repeated \p groups times in
/// place ([h0, h0, h1, h1, ...]), as grouped-query attention reads them.
llvm::Expected<NodeValue> repeatHeads(ImportContext &ctx,
                                      const onnx::NodeProto &node, NodeValue v,
                                      int64_t groups) {
  if (groups == 1)
    return v;
  Ints d = dimsOf(v);
  TRY(v, reshapeTo(ctx, node, v, {d[0], d[1], 1, d[2], d[3]}));
  TRY(v, ctx.broadcastTo(node, v,
                         {dim_t(d[0]), dim_t(d[1]), dim_t(groups), dim_t(d[2]),
                          dim_t(d[3])}));
  return reshapeTo(ctx, node, v, {d[0], d[1] * groups, d[2], d[3]});
}

/// The node's attributes.
struct AttentionAttrs {
  int64_t qHeads, kvHeads, causal, mode, left, right;
  float softcap;
  std::optional<float> scale;
};

llvm::Expected<AttentionAttrs> readAttentionAttrs(const onnx::NodeProto &node) {
  AttrReader attrs(node);
  AttentionAttrs a;
  TRY(a.qHeads, attrs.getInt("q_num_heads", 0));
  TRY(a.kvHeads, attrs.getInt("kv_num_heads", 0));
  TRY(a.causal, attrs.getInt("is_causal", 0));
  TRY(a.mode, attrs.getInt("qk_matmul_output_mode", 0));
  TRY(a.left, attrs.getInt("left_window_size", -1));
  TRY(a.right, attrs.getInt("right_window_size", -1));
  TRY(a.softcap, attrs.getFloat("softcap", 0.f));
  if (attrs.has("scale")) {
    TRY(a.scale, attrs.getFloat("scale", std::nullopt));
  }
  TRY(int64_t precision,
      attrs.getInt("softmax_precision", int64_t(onnx::TensorProto::FLOAT)));
  if (precision != onnx::TensorProto::FLOAT)
    return fail(node, "softmax_precision " + llvm::Twine(precision) +
                          " is not supported (only 1, float)");
  if (a.mode < 0 || a.mode > 3)
    return fail(node, "qk_matmul_output_mode " + llvm::Twine(a.mode) +
                          " is not one of 0-3");
  if (a.left < -1 || a.right < -1)
    return fail(node, "left_window_size and right_window_size must be -1 "
                      "or more");
  if (ImportContext::hasInput(node, 6))
    return fail(node, "nonpad_kv_seqlen (a KV cache updated outside the "
                      "node) is not supported");
  if (ImportContext::hasInput(node, 4) != ImportContext::hasInput(node, 5))
    return fail(node, "past_key and past_value must be given together");
  return a;
}

/// The keys query i may not see (1 x 1 x S x T, bool), or null when it
/// sees all: past the causal frontier j <= i + offset, or outside the
/// window [i + offset - left, i + offset + right]. With offset 0 and no
/// window this is the j > i condition fuse-softmax-mask reads as causal.
llvm::Expected<NodeValue> hiddenKeys(ImportContext &ctx,
                                     const onnx::NodeProto &node,
                                     const AttentionAttrs &a, int64_t s,
                                     int64_t t, int64_t offset) {
  if (!a.causal && a.left < 0 && a.right < 0)
    return NodeValue();
  if (s * t > kMaxFoldElements)
    return fail(node, "a " + llvm::Twine(s) + " x " + llvm::Twine(t) +
                          " causal or window mask is over the limit of " +
                          llvm::Twine(kMaxFoldElements) + " elements");
  Tensor m(ElemKind::Bool, {1, 1, dim_t(s), dim_t(t)});
  bool any = false;
  for (int64_t i = 0; i < s; ++i)
    for (int64_t j = 0; j < t; ++j) {
      int64_t p = i + offset;
      bool hide = (a.causal && j > p) || (a.left >= 0 && p - j > a.left) ||
                  (a.right >= 0 && j - p > a.right);
      storeElement(m.data(), ElemKind::Bool, i * t + j, hide ? 1 : 0);
      any |= hide;
    }
  if (!any)
    return NodeValue();
  return NodeValue(
      ctx.module().createConstant(nameOf(node) + ".hidden", std::move(m)));
}

/// attn_mask as an additive float mask of rank 4: a bool mask's false
/// becomes -inf, and a last dim shorter than the \p t keys is padded with
/// -inf.
llvm::Expected<NodeValue> additiveMask(ImportContext &ctx,
                                       const onnx::NodeProto &node,
                                       NodeValue scores) {
  TRY(NodeValue m, ctx.input(node, 3));
  Ints d = dimsOf(m);
  int64_t t = scores.dims()[3];
  if (d.empty() || d.size() > 4 || d.back() > t)
    return fail(node, "attn_mask " + m.getType()->toString() +
                          " does not broadcast to the scores " +
                          scores.getType()->toString());
  if (m.getElemKind() == ElemKind::Bool) {
    NodeValue zero = ctx.fn().createSplat(nameOf(node) + ".zero", m.dims(),
                                          ElemKind::Float32, 0.f);
    NodeValue inf = ctx.fn().createSplat(nameOf(node) + ".inf", m.dims(),
                                         ElemKind::Float32, kNegInf);
    TRY(m, make(ctx, node, OpKind::Where, {m, zero, inf}));
  }
  if (d.back() < t) {
    Ints pads(2 * d.size(), 0);
    pads.back() = t - d.back();
    d.back() = t;
    TRY(m, make(ctx, node, OpKind::Pad, {m},
                {Attr::makeInts(pads), Attr::makeInt(0),
                 Attr::makeFloat(kNegInf)}));
  }
  d.insert(d.begin(), 4 - d.size(), 1);
  return reshapeTo(ctx, node, m, d);
}

/// True if some row of the bool [1, 1, S, T] constant \p hidden hides
/// every key.
bool someRowAllHidden(NodeValue hidden) {
  auto *c = llvm::cast<Constant>(hidden.getNode());
  dim_t s = hidden.dims()[2], t = hidden.dims()[3];
  const char *p = c->getPayload().data();
  for (dim_t i = 0; i < s; ++i) {
    bool all = true;
    for (dim_t j = 0; j < t && all; ++j)
      all = loadElementInt(p, ElemKind::Bool, i * t + j) != 0;
    if (all)
      return true;
  }
  return false;
}

/// The query rows that see no key, as a bool [b, h, S, 1] from the
/// additive \p mask (rank 4, or none) and the \p hidden keys (or none), or
/// none when no row can be: the operator text gives such a row weights 0
/// and Y 0 where Softmax of a row of -inf gives NaN. It reads the masks
/// only, so the chain of the scores still fuses into one Attention.
llvm::Expected<NodeValue> emptyRows(ImportContext &ctx,
                                    const onnx::NodeProto &node, NodeValue mask,
                                    NodeValue hidden) {
  if (!mask && (!hidden || !someRowAllHidden(hidden)))
    return NodeValue();
  NodeValue t = mask;
  if (hidden) {
    std::string name = nameOf(node) + ".hiddenrow";
    NodeValue inf = ctx.fn().createSplat(name + ".inf", hidden.dims(),
                                         ElemKind::Float32, kNegInf);
    NodeValue zero = ctx.fn().createSplat(name + ".zero", hidden.dims(),
                                          ElemKind::Float32, 0.f);
    TRY(NodeValue h, make(ctx, node, OpKind::Where, {hidden, inf, zero}));
    if (t) {
      TRY(t, binary(ctx, node, OpKind::Add, t, h));
    } else {
      t = h;
    }
  }
  TRY(NodeValue mx, reduce(ctx, node, OpKind::ReduceMax, t, {3}, true));
  return binary(ctx, node, OpKind::Equal, mx,
                constantLike(ctx, node, mx, kNegInf));
}

/// \p x with the rows of \p empty ([b, h, S, 1] bool, or none) set to 0:
/// \p x is [B, H, S, N], or [B, S, H * N] (\p heads [B, H, S, N]) for
/// split heads.
llvm::Expected<NodeValue> zeroRows(ImportContext &ctx,
                                   const onnx::NodeProto &node, NodeValue x,
                                   NodeValue empty, const Ints &heads) {
  if (!empty)
    return x;
  TRY(NodeValue cond, ctx.broadcastTo(node, empty, heads));
  if (x.dims().size() == 3) {
    TRY(cond, make(ctx, node, OpKind::Transpose, {cond},
                   {Attr::makeInts({0, 2, 1, 3})}));
    TRY(cond, reshapeTo(ctx, node, cond, dimsOf(x)));
  }
  NodeValue zero = ctx.fn().createSplat(nameOf(node) + ".emptyrow", x.dims(),
                                        ElemKind::Float32, 0.f);
  return make(ctx, node, OpKind::Where, {cond, zero, x});
}

/// Q, K, V (with the past keys and values) as [B, H, S, D], the present
/// keys and values bound to outputs 1 and 2.
struct AttentionOperands {
  NodeValue q, k, v;
  bool splitInput;  ///< 3-D operands, heads split here.
  int64_t past = 0; ///< Keys in past_key.
};

llvm::Expected<AttentionOperands> attentionOperands(ImportContext &ctx,
                                                    const onnx::NodeProto &node,
                                                    AttentionAttrs &a) {
  AttentionOperands o;
  TRY(o.q, ctx.input(node, 0));
  TRY(o.k, ctx.input(node, 1));
  TRY(o.v, ctx.input(node, 2));
  size_t r = o.q.dims().size();
  if ((r != 3 && r != 4) || o.k.dims().size() != r || o.v.dims().size() != r ||
      o.q.getElemKind() != ElemKind::Float32)
    return fail(node, "Q, K and V must be float32 and all 3-D or all 4-D, "
                      "got " +
                          o.q.getType()->toString() + ", " +
                          o.k.getType()->toString() + ", " +
                          o.v.getType()->toString());
  o.splitInput = r == 3;
  if (o.splitInput) {
    if (a.qHeads < 1 || a.kvHeads < 1)
      return fail(node, "3-D Q, K and V need q_num_heads and kv_num_heads");
    TRY(o.q, splitHeads(ctx, node, o.q, a.qHeads, "Q"));
    TRY(o.k, splitHeads(ctx, node, o.k, a.kvHeads, "K"));
    TRY(o.v, splitHeads(ctx, node, o.v, a.kvHeads, "V"));
  } else if ((a.qHeads && a.qHeads != int64_t(o.q.dims()[1])) ||
             (a.kvHeads && a.kvHeads != int64_t(o.k.dims()[1]))) {
    return fail(node, "q_num_heads or kv_num_heads differs from the heads "
                      "of the 4-D Q or K");
  }
  if (ImportContext::hasInput(node, 4)) {
    TRY(NodeValue pk, ctx.input(node, 4));
    TRY(NodeValue pv, ctx.input(node, 5));
    if (pk.dims().size() != 4)
      return fail(node, "past_key must be [B, H, P, D], got " +
                            pk.getType()->toString());
    o.past = pk.dims()[2];
    TRY(o.k, make(ctx, node, OpKind::Concat, {pk, o.k}, {Attr::makeInt(2)}));
    TRY(o.v, make(ctx, node, OpKind::Concat, {pv, o.v}, {Attr::makeInt(2)}));
  }
  Ints qd = dimsOf(o.q), kd = dimsOf(o.k), vd = dimsOf(o.v);
  a.qHeads = qd[1];
  a.kvHeads = kd[1];
  if (kd[0] != qd[0] || vd[0] != qd[0] || vd[1] != kd[1] || vd[2] != kd[2] ||
      kd[3] != qd[3] || kd[1] < 1 || qd[1] % kd[1])
    return fail(node, "Q " + o.q.getType()->toString() + ", K " +
                          o.k.getType()->toString() + " and V " +
                          o.v.getType()->toString() +
                          " (as [B, H, S, D]) do not match: equal batch, K "
                          "and V heads dividing Q's, equal head size of Q "
                          "and K, equal keys of K and V");
  bindOutput(ctx, node, 1, o.k);
  bindOutput(ctx, node, 2, o.v);
  return o;
}

/// softmax(softcap(Q Kᵀ scale) + mask, hidden keys at -inf) V, with the
/// value qk_matmul_output_mode names bound to output 3.
llvm::Error importAttention(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(AttentionAttrs a, readAttentionAttrs(node));
  TRY(AttentionOperands o, attentionOperands(ctx, node, a));
  int64_t groups = a.qHeads / a.kvHeads;
  TRY(NodeValue k, repeatHeads(ctx, node, o.k, groups));
  TRY(NodeValue v, repeatHeads(ctx, node, o.v, groups));
  TRY(k,
      make(ctx, node, OpKind::Transpose, {k}, {Attr::makeInts({0, 1, 3, 2})}));
  TRY(NodeValue s, plainMatMul(ctx, node, o.q, k));
  float scale =
      a.scale ? *a.scale : float(1 / std::sqrt(double(o.q.dims()[3])));
  TRY(s, make(ctx, node, OpKind::Mul, {s, constantLike(ctx, node, s, scale)}));
  NodeValue stage[4];
  stage[0] = s;
  if (a.softcap > 0) {
    NodeValue cap = constantLike(ctx, node, s, a.softcap);
    TRY(s, make(ctx, node, OpKind::Div, {s, cap}));
    TRY(s, unary(ctx, node, OpKind::Tanh, s));
    TRY(s, make(ctx, node, OpKind::Mul, {s, cap}));
  }
  stage[1] = s;
  NodeValue mask;
  if (ImportContext::hasInput(node, 3)) {
    TRY(mask, additiveMask(ctx, node, s));
    TRY(s, binary(ctx, node, OpKind::Add, s, mask));
  }
  TRY(NodeValue hidden,
      hiddenKeys(ctx, node, a, s.dims()[2], s.dims()[3], o.past));
  TRY(NodeValue empty, emptyRows(ctx, node, mask, hidden));
  if (hidden) {
    TRY(hidden, ctx.broadcastTo(node, hidden, s.dims()));
    NodeValue inf = ctx.fn().createSplat(nameOf(node) + ".inf", s.dims(),
                                         ElemKind::Float32, kNegInf);
    TRY(s, make(ctx, node, OpKind::Where, {hidden, inf, s}));
  }
  stage[2] = s;
  TRY(s, make(ctx, node, OpKind::Softmax, {s}, {Attr::makeInt(3)}));
  stage[3] = s;
  if (a.mode == 3) {
    TRY(stage[3], zeroRows(ctx, node, s, empty, dimsOf(s)));
  }
  TRY(NodeValue y, plainMatMul(ctx, node, s, v));
  Ints d = dimsOf(y);
  if (o.splitInput) {
    TRY(y, make(ctx, node, OpKind::Transpose, {y},
                {Attr::makeInts({0, 2, 1, 3})}));
    TRY(y, reshapeTo(ctx, node, y, {d[0], d[2], d[1] * d[3]}));
  }
  // The rows of Y zeroed last: P V and the head merge stay the chain the
  // attention fusion matches.
  TRY(y, zeroRows(ctx, node, y, empty, d));
  bindOutput(ctx, node, 0, y);
  bindOutput(ctx, node, 3, stage[a.mode]);
  return llvm::Error::success();
}

const ImportRule kAttentionRules[] = {
    {"RotaryEmbedding", 23, 23, importRotary},
    {"Attention", 23, 25, importAttention},
};

} // namespace

RuleList onnximport::getAttentionImportRules() { return kAttentionRules; }
