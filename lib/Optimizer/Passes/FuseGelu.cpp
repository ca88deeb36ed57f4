//===- FuseGelu.cpp - The erf and tanh GELU patterns as one Gelu ----------===//
//
// Exporters write GELU as arithmetic:
//   exact: x * 0.5 * (1 + erf(x / sqrt 2))
//   tanh:  0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
// with the factors in any order and grouping, x / sqrt 2 as a Mul by
// 1/sqrt 2, 0.5 as a Div by 2, x^3 as x * x * x or Pow(x, 3), and the
// constants folded into each other in various ways. Rather than list the
// orders, the pass reads the outer product as a multiset of factors
// (one constant, x, and 1 + erf(u) or 1 + tanh(u)) and the argument u as a
// polynomial in x of degree at most 3, then compares coefficients with a
// relative tolerance that absorbs float rounding of the exported
// constants. Inner nodes must have no user outside the pattern, so the
// rewrite never computes erf or tanh twice.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

#include <array>
#include <cmath>

using namespace ember;

namespace {
/// Coefficients of 1, x, x^2, x^3.
using Poly = std::array<double, 4>;

/// What the outer product of a GELU candidate holds.
struct Factors {
  double scale = 1;
  llvm::SmallVector<NodeValue, 2> values;
};

/// Relative tolerance on the constants: float rounding of an exported
/// constant, and of products of two of them, stays below 1e-6.
constexpr double kRelTol = 1e-6;

bool near(double got, double want) {
  return std::fabs(got - want) <= kRelTol * std::fabs(want);
}
} // namespace

/// The uniform value of \p v, looking through Reshape and Broadcast.
static std::optional<double> uniformOf(NodeValue v) {
  while (llvm::isa<ReshapeNode>(v.getNode()) ||
         llvm::isa<BroadcastNode>(v.getNode()))
    v = v.getNode()->getNthInput(0);
  return getUniformValue(v);
}

/// True if \p v's node is inner to the pattern: used by it alone.
static bool inner(NodeValue v) { return hasOneUse(v.getNode()); }

/// Splits the product rooted at \p v into a constant and other factors,
/// through single-use Muls and Divs by constants.
static void collectFactors(NodeValue v, bool isRoot, Factors &f) {
  Node *n = v.getNode();
  if (auto c = uniformOf(v)) {
    f.scale *= *c;
    return;
  }
  if (llvm::isa<MulNode>(n) && (isRoot || inner(v))) {
    collectFactors(n->getNthInput(0), false, f);
    collectFactors(n->getNthInput(1), false, f);
    return;
  }
  if (llvm::isa<DivNode>(n) && (isRoot || inner(v)))
    if (auto c = uniformOf(n->getNthInput(1))) {
      f.scale /= *c;
      collectFactors(n->getNthInput(0), false, f);
      return;
    }
  f.values.push_back(v);
}

static Poly mulPoly(const Poly &a, const Poly &b, bool &ok) {
  Poly r{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      if (a[i] == 0 || b[j] == 0)
        continue;
      if (i + j > 3)
        ok = false;
      else
        r[i + j] += a[i] * b[j];
    }
  return r;
}

/// \p v as a polynomial in \p x (degree <= 3) built from Add, Sub, Mul,
/// Neg, Div by a constant and Pow by a small integer constant, through
/// nodes used only by the pattern.
static std::optional<Poly> polyOf(NodeValue v, NodeValue x) {
  if (v == x)
    return Poly{0, 1, 0, 0};
  if (auto c = uniformOf(v))
    return Poly{*c, 0, 0, 0};
  Node *n = v.getNode();
  if (!inner(v) || n->getNumInputs() == 0)
    return std::nullopt;
  auto a = polyOf(n->getNthInput(0), x);
  if (!a)
    return std::nullopt;
  if (llvm::isa<NegNode>(n))
    return Poly{-(*a)[0], -(*a)[1], -(*a)[2], -(*a)[3]};
  if (n->getNumInputs() != 2)
    return std::nullopt;
  if (llvm::isa<PowNode>(n)) {
    auto e = uniformOf(n->getNthInput(1));
    if (!e || *e < 1 || *e > 3 || *e != std::floor(*e))
      return std::nullopt;
    bool ok = true;
    Poly r = *a;
    for (int i = 1; i < int(*e); ++i)
      r = mulPoly(r, *a, ok);
    return ok ? std::optional<Poly>(r) : std::nullopt;
  }
  auto b = polyOf(n->getNthInput(1), x);
  if (!b)
    return std::nullopt;
  Poly r{};
  bool ok = true;
  switch (n->getKind()) {
  case NodeKind::Add:
  case NodeKind::Sub: {
    double sign = llvm::isa<SubNode>(n) ? -1 : 1;
    for (int i = 0; i < 4; ++i)
      r[i] = (*a)[i] + sign * (*b)[i];
    return r;
  }
  case NodeKind::Mul:
    r = mulPoly(*a, *b, ok);
    return ok ? std::optional<Poly>(r) : std::nullopt;
  case NodeKind::Div:
    if ((*b)[1] != 0 || (*b)[2] != 0 || (*b)[3] != 0 || (*b)[0] == 0)
      return std::nullopt;
    for (int i = 0; i < 4; ++i)
      r[i] = (*a)[i] / (*b)[0];
    return r;
  default:
    return std::nullopt;
  }
}

/// For 1 + act(u) (either operand order, act Erf or Tanh, both nodes inner
/// to the pattern): the act node.
static Node *onePlusActivation(NodeValue v) {
  auto *add = llvm::dyn_cast<AddNode>(v.getNode());
  if (!add || !inner(v))
    return nullptr;
  for (unsigned i = 0; i < 2; ++i) {
    auto one = uniformOf(add->getNthInput(i));
    NodeValue act = add->getNthInput(1 - i);
    if (one && near(*one, 1) && inner(act) &&
        (llvm::isa<ErfNode>(act.getNode()) ||
         llvm::isa<TanhNode>(act.getNode())))
      return act.getNode();
  }
  return nullptr;
}

/// True if \p p is c1 x + c3 x^3 with the given coefficients (and no
/// constant or square term beyond rounding).
static bool polyIs(const Poly &p, double c1, double c3) {
  double tiny = kRelTol * std::fabs(c1);
  return std::fabs(p[0]) <= tiny && std::fabs(p[2]) <= tiny && near(p[1], c1) &&
         (c3 == 0 ? std::fabs(p[3]) <= tiny : near(p[3], c3));
}

/// The x and the approximation (0 erf, 1 tanh) of a GELU rooted at the
/// Mul or Div \p root, if it is one.
static std::optional<std::pair<NodeValue, int64_t>> matchGelu(Node *root) {
  Factors f;
  NodeValue y = root->getNthResult(0);
  collectFactors(y, true, f);
  if (f.values.size() != 2 || !near(f.scale, 0.5))
    return std::nullopt;
  for (unsigned i = 0; i < 2; ++i) {
    NodeValue x = f.values[i];
    Node *act = onePlusActivation(f.values[1 - i]);
    if (!act || x.getType() != y.getType())
      continue;
    auto u = polyOf(act->getNthInput(0), x);
    if (!u)
      continue;
    constexpr double kSqrtHalf = 0.70710678118654752;
    constexpr double kSqrt2OverPi = 0.79788456080286536;
    if (llvm::isa<ErfNode>(act) && polyIs(*u, kSqrtHalf, 0))
      return std::make_pair(x, int64_t(0));
    if (llvm::isa<TanhNode>(act) &&
        polyIs(*u, kSqrt2OverPi, kSqrt2OverPi * 0.044715))
      return std::make_pair(x, int64_t(1));
  }
  return std::nullopt;
}

bool FuseGeluPass::run(Function &F, PassContext &) {
  bool changed = false;
  for (Node *n : nodesInOrder(F)) {
    if ((!llvm::isa<MulNode>(n) && !llvm::isa<DivNode>(n)) ||
        !isFloatKind(n->getNthResult(0).getElemKind()))
      continue;
    auto m = matchGelu(n);
    if (!m)
      continue;
    replaceNode(n, F.createGelu(n->getName(), m->first, m->second));
    changed = true;
  }
  return changed;
}
