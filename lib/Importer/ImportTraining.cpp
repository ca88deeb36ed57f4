//===- ImportTraining.cpp - Optimizer steps of ai.onnx.preview.training ---===//
//
// Adagrad, Momentum and Adam (domain ai.onnx.preview.training, opset 1) are
// one optimizer step each: elementwise updates of every tensor they are
// given, so they are composed of elementwise nodes. The step count T is a
// run-time value; the updates that depend on it (Momentum's first-step
// gradient weight, Adam's bias correction) are selected in the graph.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// Elementwise arithmetic on the values of one node, scalars as constants
/// of the kind of the tensor they meet.
class Arith {
public:
  Arith(ImportContext &ctx, const onnx::NodeProto &node)
      : ctx_(ctx), node_(node) {}
  llvm::Expected<NodeValue> add(NodeValue a, NodeValue b) {
    return binary(ctx_, node_, OpKind::Add, a, b);
  }
  llvm::Expected<NodeValue> sub(NodeValue a, NodeValue b) {
    return binary(ctx_, node_, OpKind::Sub, a, b);
  }
  llvm::Expected<NodeValue> mul(NodeValue a, NodeValue b) {
    return binary(ctx_, node_, OpKind::Mul, a, b);
  }
  llvm::Expected<NodeValue> div(NodeValue a, NodeValue b) {
    return binary(ctx_, node_, OpKind::Div, a, b);
  }
  llvm::Expected<NodeValue> scale(double s, NodeValue a) {
    return mul(scalar(a, s), a);
  }
  llvm::Expected<NodeValue> sqrt(NodeValue a) {
    return unary(ctx_, node_, OpKind::Sqrt, a);
  }
  /// A scalar constant of \p like's kind.
  NodeValue scalar(NodeValue like, double v) {
    return constantOf(ctx_, node_, like.getElemKind(), {}, v);
  }
  /// norm * x + g: the gradient with the regularization term.
  llvm::Expected<NodeValue> regularized(double norm, NodeValue x, NodeValue g) {
    if (norm == 0)
      return g;
    TRY(NodeValue nx, scale(norm, x));
    return add(nx, g);
  }
  /// Where(T > 0, a, b) for the scalar step count \p t.
  llvm::Expected<NodeValue> ifStarted(NodeValue t, NodeValue a, NodeValue b) {
    TRY(NodeValue pos, binary(ctx_, node_, OpKind::Greater, t,
                              constantOf(ctx_, node_, t.getElemKind(), {}, 0)));
    return make(ctx_, node_, OpKind::Where, {pos, a, b});
  }

private:
  ImportContext &ctx_;
  const onnx::NodeProto &node_;
};

/// The number of optimized tensors: (inputs - 2) / \p perTensor.
llvm::Expected<int> tensorCount(const onnx::NodeProto &node, int perTensor) {
  int n = node.input_size() - 2;
  if (n <= 0 || n % perTensor != 0)
    return fail(node, "expects R, T and " + llvm::Twine(perTensor) +
                          " inputs per optimized tensor, got " +
                          llvm::Twine(node.input_size()) + " inputs");
  if (node.output_size() != n / perTensor * (perTensor - 1))
    return fail(node, "expects " +
                          llvm::Twine(n / perTensor * (perTensor - 1)) +
                          " outputs, got " + llvm::Twine(node.output_size()));
  return n / perTensor;
}

/// R and T, checked to be scalars.
llvm::Expected<std::pair<NodeValue, NodeValue>>
rateAndStep(ImportContext &ctx, const onnx::NodeProto &node) {
  TRY(NodeValue r, ctx.input(node, 0));
  TRY(NodeValue t, ctx.input(node, 1));
  if (r.getType()->size() != 1 || t.getType()->size() != 1)
    return fail(node, "R and T must be scalars");
  TRY(r, reshapeTo(ctx, node, r, {}));
  TRY(t, reshapeTo(ctx, node, t, {}));
  return std::make_pair(r, t);
}

llvm::Error importAdagrad(ImportContext &ctx, const onnx::NodeProto &node) {
  AttrReader attrs(node);
  TRY(float decay, attrs.getFloat("decay_factor", 0.f));
  TRY(float eps, attrs.getFloat("epsilon", 1e-6f));
  TRY(float norm, attrs.getFloat("norm_coefficient", 0.f));
  TRY(int n, tensorCount(node, 3));
  TRY(auto rt, rateAndStep(ctx, node));
  Arith a(ctx, node);
  // r = R / (1 + T * decay_factor)
  TRY(NodeValue tf, castTo(ctx, node, rt.second, rt.first.getElemKind()));
  TRY(NodeValue den, a.scale(decay, tf));
  TRY(den, a.add(den, a.scalar(tf, 1)));
  TRY(NodeValue r, a.div(rt.first, den));
  for (int i = 0; i < n; ++i) {
    TRY(NodeValue x, ctx.input(node, 2 + i));
    TRY(NodeValue g, ctx.input(node, 2 + n + i));
    TRY(NodeValue h, ctx.input(node, 2 + 2 * n + i));
    TRY(g, a.regularized(norm, x, g));
    TRY(NodeValue g2, a.mul(g, g));
    TRY(NodeValue hNew, a.add(h, g2));
    TRY(NodeValue root, a.sqrt(hNew));
    TRY(root, a.add(root, a.scalar(root, eps)));
    TRY(NodeValue step, a.mul(r, g));
    TRY(step, a.div(step, root));
    TRY(NodeValue xNew, a.sub(x, step));
    bindOutput(ctx, node, i, xNew);
    bindOutput(ctx, node, n + i, hNew);
  }
  return llvm::Error::success();
}

llvm::Error importMomentum(ImportContext &ctx, const onnx::NodeProto &node) {
  AttrReader attrs(node);
  TRY(float alpha, attrs.getFloat("alpha", std::nullopt));
  TRY(float beta, attrs.getFloat("beta", std::nullopt));
  TRY(float norm, attrs.getFloat("norm_coefficient", std::nullopt));
  TRY(std::string mode, attrs.getString("mode", std::nullopt));
  if (mode != "standard" && mode != "nesterov")
    return fail(node, "unknown mode '" + mode + "'");
  TRY(int n, tensorCount(node, 3));
  TRY(auto rt, rateAndStep(ctx, node));
  Arith a(ctx, node);
  // The gradient's weight is 1 on the first step (T = 0).
  NodeValue r = rt.first;
  TRY(NodeValue betaT,
      a.ifStarted(rt.second, a.scalar(r, beta), a.scalar(r, 1)));
  for (int i = 0; i < n; ++i) {
    TRY(NodeValue x, ctx.input(node, 2 + i));
    TRY(NodeValue g, ctx.input(node, 2 + n + i));
    TRY(NodeValue v, ctx.input(node, 2 + 2 * n + i));
    TRY(g, a.regularized(norm, x, g));
    TRY(NodeValue av, a.scale(alpha, v));
    TRY(NodeValue bg, a.mul(betaT, g));
    TRY(NodeValue vNew, a.add(av, bg));
    NodeValue dir = vNew;
    if (mode == "nesterov") {
      TRY(NodeValue avNew, a.scale(alpha, vNew));
      TRY(dir, a.add(g, avNew));
    }
    TRY(NodeValue step, a.mul(r, dir));
    TRY(NodeValue xNew, a.sub(x, step));
    bindOutput(ctx, node, i, xNew);
    bindOutput(ctx, node, n + i, vNew);
  }
  return llvm::Error::success();
}

/// Adam's rate with the bias correction R sqrt(1 - beta^T) / (1 - alpha^T)
/// from the first step on (T > 0), R itself at T = 0.
llvm::Expected<NodeValue> adamRate(Arith &a, ImportContext &ctx,
                                   const onnx::NodeProto &node, NodeValue r,
                                   NodeValue t, double alpha, double beta) {
  TRY(NodeValue tf, castTo(ctx, node, t, r.getElemKind()));
  TRY(NodeValue betaT, binary(ctx, node, OpKind::Pow, a.scalar(r, beta), tf));
  TRY(NodeValue alphaT, binary(ctx, node, OpKind::Pow, a.scalar(r, alpha), tf));
  TRY(NodeValue num, a.sub(a.scalar(r, 1), betaT));
  TRY(num, a.sqrt(num));
  TRY(NodeValue den, a.sub(a.scalar(r, 1), alphaT));
  TRY(NodeValue adj, a.mul(r, num));
  TRY(adj, a.div(adj, den));
  return a.ifStarted(t, adj, r);
}

llvm::Error importAdam(ImportContext &ctx, const onnx::NodeProto &node) {
  AttrReader attrs(node);
  TRY(float alpha, attrs.getFloat("alpha", 0.9f));
  TRY(float beta, attrs.getFloat("beta", 0.999f));
  TRY(float eps, attrs.getFloat("epsilon", 1e-6f));
  TRY(float norm, attrs.getFloat("norm_coefficient", 0.f));
  TRY(float post, attrs.getFloat("norm_coefficient_post", 0.f));
  TRY(int n, tensorCount(node, 4));
  TRY(auto rt, rateAndStep(ctx, node));
  Arith a(ctx, node);
  TRY(NodeValue r, adamRate(a, ctx, node, rt.first, rt.second, alpha, beta));
  for (int i = 0; i < n; ++i) {
    TRY(NodeValue x, ctx.input(node, 2 + i));
    TRY(NodeValue g, ctx.input(node, 2 + n + i));
    TRY(NodeValue v, ctx.input(node, 2 + 2 * n + i));
    TRY(NodeValue h, ctx.input(node, 2 + 3 * n + i));
    TRY(g, a.regularized(norm, x, g));
    TRY(NodeValue av, a.scale(alpha, v));
    TRY(NodeValue ag, a.scale(1 - double(alpha), g));
    TRY(NodeValue vNew, a.add(av, ag));
    TRY(NodeValue g2, a.mul(g, g));
    TRY(NodeValue bh, a.scale(beta, h));
    TRY(NodeValue bg, a.scale(1 - double(beta), g2));
    TRY(NodeValue hNew, a.add(bh, bg));
    TRY(NodeValue root, a.sqrt(hNew));
    TRY(root, a.add(root, a.scalar(root, eps)));
    TRY(NodeValue step, a.div(vNew, root));
    TRY(step, a.mul(r, step));
    TRY(NodeValue xNew, a.sub(x, step));
    if (post != 0) {
      TRY(xNew, a.scale(1 - double(post), xNew));
    }
    bindOutput(ctx, node, i, xNew);
    bindOutput(ctx, node, n + i, vNew);
    bindOutput(ctx, node, 2 * n + i, hNew);
  }
  return llvm::Error::success();
}

const ImportRule kTrainingRules[] = {
    {"Adagrad", 1, 1, importAdagrad},
    {"Momentum", 1, 1, importMomentum},
    {"Adam", 1, 1, importAdam},
};

} // namespace

RuleList onnximport::getTrainingImportRules() { return kTrainingRules; }
