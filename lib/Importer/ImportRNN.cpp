//===- ImportRNN.cpp - RNN, GRU and LSTM unrolled over time ---------------===//
//
// The sequence length is static, so a recurrent layer becomes its time
// steps: per direction and step, two MatMuls (input and recurrence), the
// gate slices, their activations and the state update, with the per-step
// hidden states concatenated into Y. Gate orders follow ONNX (LSTM: i o f c,
// GRU: z r h). Supported: forward/reverse/bidirectional, layout 0 and 1,
// initial states, biases, peepholes, clip, linear_before_reset, and the
// activations Sigmoid, Tanh and Relu. sequence_lens, a constant or a
// run-time value (fed or computed, as torch exports a packed sequence),
// masks each step per batch entry: past its length an entry keeps its state
// and outputs zeros, so a reverse direction starts at its last valid step
// (docs/RuntimeInputs.md, path 2). Constant full lengths need no mask.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"
#include "ProtoTensor.h"

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

enum class Cell { RNN, GRU, LSTM };

struct RNNSetup {
  Cell cell;
  int64_t gates, hidden, seq, batch, input, dirs;
  bool reverseOnly, batchFirst, linearBeforeReset;
  float clip;
  std::vector<OpKind> acts; // per direction: f, g, h (as used)
  NodeValue lens;           // Int64 [batch, 1], or null: every step is valid
};

llvm::Expected<OpKind> activation(const onnx::NodeProto &node,
                                  const std::string &name) {
  if (name == "Sigmoid")
    return OpKind::Sigmoid;
  if (name == "Tanh")
    return OpKind::Tanh;
  if (name == "Relu")
    return OpKind::Relu;
  return fail(node, "activation '" + name + "' is not supported");
}

/// Rows [r0, r0 + n) of 2-D \p x along \p axis.
llvm::Expected<NodeValue> sliceAxis(ImportContext &ctx,
                                    const onnx::NodeProto &node, NodeValue x,
                                    int64_t axis, int64_t r0, int64_t n) {
  if (axis < 0 || axis >= int64_t(x.dims().size()) || r0 < 0 || n < 1 ||
      r0 + n > x.dims()[axis])
    return fail(node, "operand " + x.getType()->toString() +
                          " is too small for the gates it must hold");
  Ints s(x.dims().size(), 0), st(x.dims().size(), 1);
  Ints c(x.dims().begin(), x.dims().end());
  s[axis] = r0;
  c[axis] = n;
  if (c == Ints(x.dims().begin(), x.dims().end()))
    return x;
  return make(ctx, node, OpKind::Slice, {x},
              {Attr::makeInts(s), Attr::makeInts(st), Attr::makeInts(c)});
}

/// Entry \p d of a [dirs, ...] tensor, without the leading dim.
llvm::Expected<NodeValue> perDir(ImportContext &ctx,
                                 const onnx::NodeProto &node, NodeValue x,
                                 int64_t d) {
  TRY(NodeValue s, sliceAxis(ctx, node, x, 0, d, 1));
  return reshapeTo(ctx, node, s, Ints(x.dims().begin() + 1, x.dims().end()));
}

llvm::Expected<NodeValue> add(ImportContext &ctx, const onnx::NodeProto &node,
                              NodeValue a, NodeValue b) {
  return binary(ctx, node, OpKind::Add, a, b);
}
llvm::Expected<NodeValue> mul(ImportContext &ctx, const onnx::NodeProto &node,
                              NodeValue a, NodeValue b) {
  return binary(ctx, node, OpKind::Mul, a, b);
}

/// Gate pre-activation clipping, then the activation.
llvm::Expected<NodeValue> act(ImportContext &ctx, const onnx::NodeProto &node,
                              const RNNSetup &s, OpKind k, NodeValue x) {
  if (s.clip > 0) {
    TRY(x, make(ctx, node, OpKind::Clip, {x},
                {Attr::makeFloat(-s.clip), Attr::makeFloat(s.clip)}));
  }
  return unary(ctx, node, k, x);
}

/// Masks step \p t by the sequence lengths: an entry at or past its length
/// keeps \p hPrev and \p cPrev (\p h and \p c are updated in place) and
/// outputs zeros. Returns the step's output.
llvm::Expected<NodeValue> maskStep(ImportContext &ctx,
                                   const onnx::NodeProto &node,
                                   const RNNSetup &s, int64_t t, NodeValue &h,
                                   NodeValue hPrev, NodeValue &c,
                                   NodeValue cPrev) {
  NodeValue at = int64Constant(ctx, node, "step", {1, 1}, {t});
  TRY(NodeValue valid, binary(ctx, node, OpKind::Less, at, s.lens));
  TRY(valid, ctx.broadcastTo(node, valid, {s.batch, s.hidden}));
  TRY(h, make(ctx, node, OpKind::Where, {valid, h, hPrev}));
  if (c) {
    TRY(c, make(ctx, node, OpKind::Where, {valid, c, cPrev}));
  }
  NodeValue zero =
      constantOf(ctx, node, ElemKind::Float32, {s.batch, s.hidden}, 0);
  return make(ctx, node, OpKind::Where, {valid, h, zero});
}

/// The weights of one direction, ready for MatMul and Add.
struct DirWeights {
  NodeValue wT, rT, wb, rb, p; // p: peepholes [3h] or null
  OpKind f, g, h;
};

/// Runs one direction over time; returns per-step H (in time order), and
/// the final H and C.
llvm::Error runDirection(ImportContext &ctx, const onnx::NodeProto &node,
                         const RNNSetup &s, const DirWeights &w, NodeValue x,
                         bool reverse, NodeValue h, NodeValue c,
                         std::vector<NodeValue> &ys, NodeValue &hOut,
                         NodeValue &cOut) {
  int64_t H = s.hidden;
  ys.assign(s.seq, NodeValue());
  for (int64_t step = 0; step < s.seq; ++step) {
    int64_t t = reverse ? s.seq - 1 - step : step;
    NodeValue hPrev = h, cPrev = c;
    TRY(NodeValue xt, perDir(ctx, node, x, t)); // [batch, input]
    TRY(NodeValue xw, plainMatMul(ctx, node, xt, w.wT));
    TRY(xw, add(ctx, node, xw, w.wb));
    TRY(NodeValue hr, plainMatMul(ctx, node, h, w.rT));
    TRY(hr, add(ctx, node, hr, w.rb));
    auto gate = [&](NodeValue v, int64_t i) {
      return sliceAxis(ctx, node, v, 1, i * H, H);
    };
    if (s.cell == Cell::RNN) {
      TRY(NodeValue sum, add(ctx, node, xw, hr));
      TRY(h, act(ctx, node, s, w.f, sum));
    } else if (s.cell == Cell::LSTM) {
      NodeValue pre[4];
      for (int64_t i = 0; i < 4; ++i) {
        TRY(NodeValue a, gate(xw, i));
        TRY(NodeValue b, gate(hr, i));
        TRY(pre[i], add(ctx, node, a, b));
      }
      auto peep = [&](NodeValue v, int64_t i,
                      NodeValue st) -> llvm::Expected<NodeValue> {
        if (!w.p)
          return v;
        TRY(NodeValue pi, sliceAxis(ctx, node, w.p, 0, i * H, H));
        TRY(NodeValue m, mul(ctx, node, st, pi));
        return add(ctx, node, v, m);
      };
      TRY(NodeValue ip, peep(pre[0], 0, c));
      TRY(NodeValue fp, peep(pre[2], 2, c));
      TRY(NodeValue ig, act(ctx, node, s, w.f, ip));
      TRY(NodeValue fg, act(ctx, node, s, w.f, fp));
      TRY(NodeValue cg, act(ctx, node, s, w.g, pre[3]));
      TRY(NodeValue keep, mul(ctx, node, fg, c));
      TRY(NodeValue fresh, mul(ctx, node, ig, cg));
      TRY(c, add(ctx, node, keep, fresh));
      TRY(NodeValue op, peep(pre[1], 1, c));
      TRY(NodeValue og, act(ctx, node, s, w.f, op));
      TRY(NodeValue hc, unary(ctx, node, w.h, c));
      TRY(h, mul(ctx, node, og, hc));
    } else { // GRU
      TRY(NodeValue xz, gate(xw, 0));
      TRY(NodeValue xr, gate(xw, 1));
      TRY(NodeValue xh, gate(xw, 2));
      TRY(NodeValue hz, gate(hr, 0));
      TRY(NodeValue hrr, gate(hr, 1));
      TRY(NodeValue zs, add(ctx, node, xz, hz));
      TRY(NodeValue rs, add(ctx, node, xr, hrr));
      TRY(NodeValue z, act(ctx, node, s, w.f, zs));
      TRY(NodeValue r, act(ctx, node, s, w.f, rs));
      NodeValue hh;
      if (s.linearBeforeReset) {
        TRY(NodeValue hg, gate(hr, 2)); // includes Rbh
        TRY(hh, mul(ctx, node, r, hg));
      } else {
        TRY(NodeValue rh, mul(ctx, node, r, h));
        TRY(NodeValue rT, sliceAxis(ctx, node, w.rT, 1, 2 * H, H));
        TRY(hh, plainMatMul(ctx, node, rh, rT));
        TRY(NodeValue rbh, sliceAxis(ctx, node, w.rb, 1, 2 * H, H));
        TRY(hh, add(ctx, node, hh, rbh));
      }
      TRY(NodeValue hs, add(ctx, node, xh, hh));
      TRY(NodeValue cand, act(ctx, node, s, w.g, hs));
      // H = (1 - z) * cand + z * H = cand + z * (H - cand)
      TRY(NodeValue diff, binary(ctx, node, OpKind::Sub, h, cand));
      TRY(NodeValue zd, mul(ctx, node, z, diff));
      TRY(h, add(ctx, node, cand, zd));
    }
    if (s.lens) {
      TRY(NodeValue y, maskStep(ctx, node, s, t, h, hPrev, c, cPrev));
      ys[t] = y;
    } else {
      ys[t] = h;
    }
  }
  hOut = h;
  cOut = c;
  return llvm::Error::success();
}

/// Reads the weights of direction \p d.
llvm::Expected<DirWeights> dirWeights(ImportContext &ctx,
                                      const onnx::NodeProto &node,
                                      const RNNSetup &s, int64_t d) {
  DirWeights w;
  int64_t gh = s.gates * s.hidden;
  TRY(NodeValue W, ctx.input(node, 1));
  TRY(NodeValue R, ctx.input(node, 2));
  if (W.dims() != llvm::ArrayRef<dim_t>({s.dirs, gh, s.input}) ||
      R.dims() != llvm::ArrayRef<dim_t>({s.dirs, gh, s.hidden}))
    return fail(node, "W or R does not match hidden_size and the input");
  TRY(NodeValue wd, perDir(ctx, node, W, d));
  TRY(NodeValue rd, perDir(ctx, node, R, d));
  auto tr = [&](NodeValue v) -> llvm::Expected<NodeValue> {
    auto t = ctx.fn().tryCreateTranspose(nameOf(node), v, {1, 0});
    if (!t)
      return fail(node, errorToString(t.takeError()));
    return NodeValue(*t);
  };
  TRY(w.wT, tr(wd));
  TRY(w.rT, tr(rd));
  if (ImportContext::hasInput(node, 3)) {
    TRY(NodeValue B, ctx.input(node, 3));
    TRY(NodeValue bd, perDir(ctx, node, B, d));
    TRY(NodeValue wb, sliceAxis(ctx, node, bd, 0, 0, gh));
    TRY(NodeValue rb, sliceAxis(ctx, node, bd, 0, gh, gh));
    TRY(w.wb, reshapeTo(ctx, node, wb, {1, gh}));
    TRY(w.rb, reshapeTo(ctx, node, rb, {1, gh}));
  } else {
    w.wb = w.rb = constantOf(ctx, node, ElemKind::Float32, {1, gh}, 0);
  }
  if (s.cell == Cell::LSTM && ImportContext::hasInput(node, 7)) {
    TRY(NodeValue P, ctx.input(node, 7));
    TRY(w.p, perDir(ctx, node, P, d));
  }
  size_t per = s.cell == Cell::LSTM ? 3 : s.cell == Cell::GRU ? 2 : 1;
  w.f = s.acts[d * per];
  w.g = per > 1 ? s.acts[d * per + 1] : w.f;
  w.h = per > 2 ? s.acts[d * per + 2] : w.g;
  return w;
}

/// Initial state input \p i for direction \p d, or zeros.
llvm::Expected<NodeValue> initialState(ImportContext &ctx,
                                       const onnx::NodeProto &node,
                                       const RNNSetup &s, int i, int64_t d) {
  if (!ImportContext::hasInput(node, i))
    return constantOf(ctx, node, ElemKind::Float32, {s.batch, s.hidden}, 0);
  TRY(NodeValue v, ctx.input(node, i));
  if (s.batchFirst) { // [batch, dirs, hidden] -> [dirs, batch, hidden]
    auto t = ctx.fn().tryCreateTranspose(nameOf(node), v, {1, 0, 2});
    if (!t)
      return fail(node, errorToString(t.takeError()));
    v = NodeValue(*t);
  }
  return perDir(ctx, node, v, d);
}

/// sequence_lens as Int64 [batch, 1] for the step masks, or null where it
/// is a constant holding the full length for every entry.
llvm::Expected<NodeValue> sequenceLens(ImportContext &ctx,
                                       const onnx::NodeProto &node,
                                       const RNNSetup &s) {
  TRY(NodeValue lens, ctx.input(node, 4));
  if (lens.dims() != llvm::ArrayRef<dim_t>({s.batch}) ||
      (lens.getElemKind() != ElemKind::Int32 &&
       lens.getElemKind() != ElemKind::Int64))
    return fail(node, "sequence_lens must be int32 or int64 [batch]");
  if (llvm::isa<Constant>(lens.getNode())) {
    TRY(Ints v, ctx.constantInts(node, 4));
    if (std::all_of(v.begin(), v.end(), [&](int64_t l) { return l == s.seq; }))
      return NodeValue();
  }
  TRY(lens, castTo(ctx, node, lens, ElemKind::Int64));
  return reshapeTo(ctx, node, lens, {s.batch, 1});
}

llvm::Expected<RNNSetup> readSetup(ImportContext &ctx,
                                   const onnx::NodeProto &node, Cell cell,
                                   NodeValue x) {
  AttrReader attrs(node);
  RNNSetup s;
  s.cell = cell;
  s.gates = cell == Cell::LSTM ? 4 : cell == Cell::GRU ? 3 : 1;
  TRY(s.hidden, attrs.getInt("hidden_size", std::nullopt));
  TRY(std::string dir, attrs.getString("direction", "forward"));
  TRY(int64_t layout, attrs.getInt("layout", 0));
  TRY(int64_t lbr, attrs.getInt("linear_before_reset", 0));
  TRY(int64_t inputForget, attrs.getInt("input_forget", 0));
  TRY(s.clip, attrs.getFloat("clip", 0.f));
  // A hidden_size over the element limit could not be a weight's dim (and
  // gates * hidden_size would overflow).
  if (x.dims().size() != 3 || s.hidden < 1 || s.hidden > kMaxTensorElements ||
      inputForget ||
      (dir != "forward" && dir != "reverse" && dir != "bidirectional"))
    return fail(node, "needs a 3-D input, a positive hidden_size, a known "
                      "direction and input_forget=0");
  s.batchFirst = layout == 1;
  s.linearBeforeReset = lbr;
  s.reverseOnly = dir == "reverse";
  s.dirs = dir == "bidirectional" ? 2 : 1;
  s.seq = x.dims()[s.batchFirst ? 1 : 0];
  s.batch = x.dims()[s.batchFirst ? 0 : 1];
  s.input = x.dims()[2];
  // Each step is unrolled into a dozen nodes: the declared length must not
  // size the graph beyond what the importer unrolls elsewhere.
  if (s.seq > kMaxUnrolledSteps)
    return fail(
        node, "a sequence of " + llvm::Twine(s.seq) + " steps; the limit is " +
                  llvm::Twine(kMaxUnrolledSteps) + " (each step is unrolled)");
  std::vector<std::string> names;
  if (const auto *a = attrs.find("activations"))
    names.assign(a->strings().begin(), a->strings().end());
  size_t per = cell == Cell::LSTM ? 3 : cell == Cell::GRU ? 2 : 1;
  if (names.empty()) {
    static const char *kDefaults[] = {"Sigmoid", "Tanh", "Tanh"};
    for (int64_t d = 0; d < s.dirs; ++d)
      for (size_t i = 0; i < per; ++i)
        names.push_back(cell == Cell::RNN ? "Tanh" : kDefaults[i]);
  }
  if (names.size() != per * s.dirs)
    return fail(node, "expected " + llvm::Twine(per * s.dirs) + " activations");
  for (const std::string &n : names) {
    TRY(OpKind k, activation(node, n));
    s.acts.push_back(k);
  }
  if (ImportContext::hasInput(node, 4)) {
    TRY(s.lens, sequenceLens(ctx, node, s));
  }
  return s;
}

template <Cell C>
llvm::Error importRecurrent(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue x, ctx.input(node, 0));
  if (x.getElemKind() != ElemKind::Float32)
    return fail(node, "only float32 is supported");
  TRY(RNNSetup s, readSetup(ctx, node, C, x));
  if (s.batchFirst) {
    auto t = ctx.fn().tryCreateTranspose(nameOf(node), x, {1, 0, 2});
    if (!t)
      return fail(node, errorToString(t.takeError()));
    x = NodeValue(*t);
  }
  std::vector<NodeValue> yDirs, hDirs, cDirs;
  for (int64_t d = 0; d < s.dirs; ++d) {
    TRY(DirWeights w, dirWeights(ctx, node, s, d));
    TRY(NodeValue h0, initialState(ctx, node, s, 5, d));
    NodeValue c0;
    if (C == Cell::LSTM) {
      TRY(c0, initialState(ctx, node, s, 6, d));
    }
    std::vector<NodeValue> ys;
    NodeValue hN, cN;
    EMBER_RETURN_IF_ERR(runDirection(
        ctx, node, s, w, x, s.reverseOnly || d == 1, h0, c0, ys, hN, cN));
    for (NodeValue &y : ys) {
      TRY(y, reshapeTo(ctx, node, y, {1, 1, s.batch, s.hidden}));
    }
    NodeValue yd = ys[0];
    if (ys.size() > 1) {
      TRY(yd, make(ctx, node, OpKind::Concat, ys, {Attr::makeInt(0)}));
    }
    yDirs.push_back(yd);
    TRY(hN, reshapeTo(ctx, node, hN, {1, s.batch, s.hidden}));
    hDirs.push_back(hN);
    if (C == Cell::LSTM) {
      TRY(cN, reshapeTo(ctx, node, cN, {1, s.batch, s.hidden}));
      cDirs.push_back(cN);
    }
  }
  auto join = [&](std::vector<NodeValue> &v,
                  int64_t axis) -> llvm::Expected<NodeValue> {
    if (v.size() == 1)
      return v[0];
    return make(ctx, node, OpKind::Concat, v, {Attr::makeInt(axis)});
  };
  TRY(NodeValue y, join(yDirs, 1));  // [seq, dirs, batch, hidden]
  TRY(NodeValue yh, join(hDirs, 0)); // [dirs, batch, hidden]
  NodeValue yc;
  if (C == Cell::LSTM) {
    TRY(yc, join(cDirs, 0));
  }
  if (s.batchFirst) {
    auto tr = [&](NodeValue v, Ints perm) -> llvm::Expected<NodeValue> {
      auto t = ctx.fn().tryCreateTranspose(nameOf(node), v, perm);
      if (!t)
        return fail(node, errorToString(t.takeError()));
      return NodeValue(*t);
    };
    TRY(y, tr(y, {2, 0, 1, 3}));
    TRY(yh, tr(yh, {1, 0, 2}));
    if (yc) {
      TRY(yc, tr(yc, {1, 0, 2}));
    }
  }
  bindOutput(ctx, node, 0, y);
  bindOutput(ctx, node, 1, yh);
  if (C == Cell::LSTM)
    bindOutput(ctx, node, 2, yc);
  return llvm::Error::success();
}

const ImportRule kRNNRules[] = {
    {"RNN", 7, 17, importRecurrent<Cell::RNN>},
    {"GRU", 7, 17, importRecurrent<Cell::GRU>},
    {"LSTM", 7, 17, importRecurrent<Cell::LSTM>},
};

} // namespace

RuleList onnximport::getRNNImportRules() { return kRNNRules; }
