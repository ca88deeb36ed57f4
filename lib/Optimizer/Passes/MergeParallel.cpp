//===- MergeParallel.cpp - One MatMul/Gemm/Conv for parallel ones ---------===//
//
// Several MatMuls, Gemms or Convs that read the same input with constant
// weights become one node over the concatenated weights, followed by one
// Slice per original result:
//   MatMul(x, W1), MatMul(x, W2)  ->  Slice(MatMul(x, [W1 W2]))
//   Gemm(a, B1, C1), Gemm(a, B2, C2) -> Slice(Gemm(a, [B1 B2], [C1 C2]))
//   Conv(x, F1, b1), Conv(x, F2, b2) -> Slice(Conv(x, [F1; F2], [b1; b2]))
// The weights are concatenated at compile time. A group must agree on
// everything but the output width: rank-2 MatMul; Gemm attributes; Conv
// window, Group = 1, epilogue activation and no residual.
//
// Profitability: the merged node reads the shared input once instead of n
// times but the Slices copy every result once. A group is merged when the
// reads saved are at least the copies added, (n - 1) * |x| >= sum |y_i|
// (element counts). Inception-style 1x1 branches qualify; a transformer's
// Q/K/V projections (each result as large as the input) do not.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"
#include "Passes.h"

#include <cstring>
#include <map>

using namespace ember;

/// Concatenates constant payloads along \p axis.
static Tensor concatPayloads(llvm::ArrayRef<const Tensor *> parts,
                             unsigned axis) {
  const Type &t0 = parts[0]->getType();
  llvm::SmallVector<dim_t, kMaxRank> dims(t0.dims().begin(), t0.dims().end());
  dims[axis] = 0;
  for (const Tensor *p : parts)
    dims[axis] += p->getType().dims()[axis];
  Tensor out(t0.withDims(dims));
  size_t outer = 1;
  for (unsigned i = 0; i < axis; ++i)
    outer *= dims[i];
  if (outer == 0)
    return out; // no elements to copy
  char *dst = out.data();
  for (size_t o = 0; o < outer; ++o)
    for (const Tensor *p : parts) {
      size_t block = p->sizeInBytes() / outer;
      std::memcpy(dst, p->data() + o * block, block);
      dst += block;
    }
  return out;
}

static const Tensor *payloadOf(NodeValue v) {
  auto *c = llvm::dyn_cast<Constant>(v.getNode());
  return c ? &c->getPayload() : nullptr;
}

/// Operand \p idx of every node of \p group, concatenated along \p axis: a
/// new Constant if all are constants, else a Concat node.
static NodeValue concatOperand(Function &F, llvm::ArrayRef<Node *> group,
                               unsigned idx, unsigned axis,
                               const std::string &name) {
  llvm::SmallVector<const Tensor *, 4> payloads;
  llvm::SmallVector<NodeValue, 4> values;
  for (Node *n : group) {
    values.push_back(n->getNthInput(idx));
    payloads.push_back(payloadOf(values.back()));
  }
  if (llvm::all_of(payloads, [](const Tensor *p) { return p != nullptr; }))
    return F.getParent().createConstant(name, concatPayloads(payloads, axis));
  return F.createConcat(name, values, axis);
}

/// The key that nodes must share to be merged, or "" if \p n never merges.
/// The output width (Conv M, MatMul/Gemm N) may differ.
static std::string mergeKey(const Node *n) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << n->getKindName() << "|" << n->getNthInput(0).getNode() << ":"
     << n->getNthInput(0).getResNo() << "|";
  if (auto *mm = llvm::dyn_cast<MatMulNode>(n)) {
    if (mm->getLHS().dims().size() != 2 || !payloadOf(mm->getRHS()) ||
        !mm->getEpilogue().empty() || mm->getFusedActivation() != 0)
      return "";
    os << mm->getTransB();
    return os.str();
  }
  if (auto *g = llvm::dyn_cast<GemmNode>(n)) {
    if (!payloadOf(g->getB()))
      return "";
    os << g->getAlpha() << "|" << g->getBeta() << "|" << g->getTransA() << "|"
       << g->getTransB();
    return os.str();
  }
  if (auto *c = llvm::dyn_cast<ConvNode>(n)) {
    if (c->getGroup() != 1 || !c->getResidual().empty() ||
        !payloadOf(c->getFilter()) || !payloadOf(c->getBias()))
      return "";
    llvm::ArrayRef<dim_t> w = c->getFilter().dims();
    os << w[2] << "x" << w[3] << "|";
    for (auto v : {c->getStrides(), c->getPads(), c->getDilations()})
      for (int64_t i : v)
        os << i << ",";
    os << "|" << c->getFusedActivation() << "|" << c->getFusedAlpha() << "|"
       << c->getFusedBeta();
    return os.str();
  }
  return "";
}

/// True if merging \p group pays for its Slices (see the file comment).
static bool isProfitable(llvm::ArrayRef<Node *> group) {
  dim_t outputs = 0;
  for (Node *n : group)
    outputs += n->getType()->size();
  dim_t input = group[0]->getNthInput(0).getType()->size();
  return group.size() >= 2 && dim_t(group.size() - 1) * input >= outputs;
}

/// Builds the merged node of \p group; its results concatenate theirs
/// along axis 1.
static Node *buildMerged(Function &F, llvm::ArrayRef<Node *> group) {
  Node *first = group[0];
  std::string name = first->getName().str() + ".merged";
  llvm::SmallVector<NodeValue, 4> ops = {first->getNthInput(0)};
  switch (first->getKind()) {
  case NodeKind::MatMul: {
    unsigned bAxis = llvm::cast<MatMulNode>(first)->getTransB() ? 0 : 1;
    ops.push_back(concatOperand(F, group, 1, bAxis, name + ".rhs"));
    break;
  }
  case NodeKind::Gemm: {
    unsigned bAxis = llvm::cast<GemmNode>(first)->getTransB() ? 0 : 1;
    ops.push_back(concatOperand(F, group, 1, bAxis, name + ".b"));
    ops.push_back(concatOperand(F, group, 2, 1, name + ".c"));
    break;
  }
  default: // Conv
    ops.push_back(concatOperand(F, group, 1, 0, name + ".filter"));
    ops.push_back(concatOperand(F, group, 2, 0, name + ".bias"));
    break;
  }
  return createLike(F, *first, ops, first->getAttrs());
}

bool MergeParallelPass::run(Function &F, PassContext &ctx) {
  // Groups in topological order of their first member, so the merged node
  // is placed where all its operands exist.
  std::map<std::string, llvm::SmallVector<Node *, 4>> groups;
  std::vector<std::string> order;
  for (Node *n : nodesInOrder(F)) {
    std::string key = mergeKey(n);
    if (key.empty())
      continue;
    auto &g = groups[key];
    if (g.empty())
      order.push_back(key);
    g.push_back(n);
  }
  bool changed = false;
  for (const std::string &key : order) {
    llvm::ArrayRef<Node *> group = groups[key];
    if (!isProfitable(group))
      continue;
    Node *merged = buildMerged(F, group);
    NodeValue all = merged->getNthResult(0);
    int64_t offset = 0;
    for (Node *n : group) {
      llvm::ArrayRef<dim_t> d = n->getType()->dims();
      llvm::SmallVector<int64_t, kMaxRank> starts(d.size(), 0),
          steps(d.size(), 1), dims(d.begin(), d.end());
      starts[1] = offset;
      offset += d[1];
      NodeValue part =
          F.createSlice(n->getName().str() + ".part", all, starts, steps, dims);
      n->getNthResult(0).replaceAllUsesWith(part);
      F.eraseNode(n);
    }
    ctx.counters["merge-parallel.merged"] += group.size();
    changed = true;
  }
  return changed;
}
