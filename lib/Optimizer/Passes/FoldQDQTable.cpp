//===- FoldQDQTable.cpp - Elementwise functions of bytes as tables -------===//
//
// Quantize(f(Dequantize(x))) with f an elementwise expression whose only
// varying operand is one per-tensor byte tensor x takes one of 256 values
// per input byte. onnxruntime's QDQ files put a pair around each function
// (Sigmoid, Tanh, Clip, Exp, ...), and SiLU is written as
//   Quantize(Mul(Dequantize(x), Dequantize(Quantize(Sigmoid(Dequantize(x))))))
// whose inner Quantize this fold has already made a lookup in a table of
// x's bytes: the whole expression is still a function of x's bytes. The
// table of those values is the same expression applied to the 256 bytes
// in order, a constant subgraph that constant folding evaluates at compile
// time; the tensor then becomes a TableLookup of x in that table (whose
// lowering is a Gather at index x, x + 128 for Int8). So every byte maps
// to exactly what the expression computes where the compiler evaluates
// constants, and the tensor moves as bytes instead of Float32.
//
// The expression may hold elementwise ops of any arity (their other
// operands Splats, Constants of one value, or broadcast one-element
// constant expressions),
// per-tensor Dequantize and Quantize, and TableLookups in constant tables.
//
//===----------------------------------------------------------------------===//
#include "FoldQDQ.h"
#include "PassUtils.h"

#include "ember/Base/ElemAccess.h"
#include "ember/Graph/OpInfo.h"

#include <map>

using namespace ember;
using namespace ember::qdq;

namespace {

/// How many nodes the walk of one expression may visit (a shared node once
/// per path, the expressions behind its byte operands included): bounds the
/// walk and the table's subgraph.
constexpr unsigned kMaxTableNodes = 64;

/// How many nodes a table's constant subgraph may hold (tables composed of
/// earlier tables hold theirs).
constexpr unsigned kMaxConstantNodes = 512;

/// The 256 values of \p kind (Int8 or UInt8) in order of their index.
Constant *allBytes(Function &F, const std::string &name, ElemKind kind) {
  Tensor t(kind, {256});
  if (kind == ElemKind::Int8) {
    auto h = t.getHandle<int8_t>();
    for (int i = 0; i < 256; ++i)
      h.at({i}) = int8_t(i - 128);
  } else {
    auto h = t.getHandle<uint8_t>();
    for (int i = 0; i < 256; ++i)
      h.at({i}) = uint8_t(i);
  }
  return F.getParent().createConstant(name, std::move(t));
}

/// True for an elementwise op of one result (the table ops the graph can
/// recreate with createLike).
bool isElementwise(const Node &n) {
  return isTableOp(n.getKind()) && n.getNumResults() == 1 &&
         getOpInfo(toOpKind(n.getKind())).elementwise;
}

/// A TableLookup in a constant table (an earlier fold's output).
TableLookupNode *constantLookup(NodeValue v) {
  auto *t = llvm::dyn_cast<TableLookupNode>(v.getNode());
  unsigned budget = kMaxConstantNodes;
  return t && isConstantExpr(t->getTable(), budget) ? t : nullptr;
}

/// The one-element constant expression that \p v broadcasts (through
/// Reshapes and Broadcasts), or null. Importers write a scalar operand so:
/// GELU's 1/sqrt(2) and its quantized 1 (a Dequantize of a constant byte).
NodeValue broadcastScalar(NodeValue v, unsigned &budget) {
  while (llvm::isa<BroadcastNode>(v.getNode()) ||
         llvm::isa<ReshapeNode>(v.getNode()))
    v = v.getNode()->getNthInput(0);
  if (v.getType()->size() != 1 || !isConstantExpr(v, budget))
    return NodeValue();
  return v;
}

/// The value of \p v when it is a Constant of one value that a Splat of its
/// kind holds (importers write a scalar attribute so: HardSigmoid's alpha
/// and beta at the shape of x).
std::optional<float> uniformConstant(NodeValue v) {
  if (!llvm::isa<Constant>(v.getNode()))
    return std::nullopt;
  std::optional<double> u = getUniformValue(v);
  if (!u || double(float(*u)) != *u || !holdsExactly(v.getElemKind(), *u))
    return std::nullopt;
  return float(*u);
}

/// The walk over one expression: its single varying leaf and the budget it
/// shares with the walks it starts.
struct Walk {
  unsigned &budget;
  NodeValue x = NodeValue();
  /// Records \p leaf as the varying leaf; false when another one was.
  bool leaf(NodeValue leaf) {
    if (!x)
      x = leaf;
    return x == leaf;
  }
};

bool walkValue(NodeValue v, Walk &w);

/// The byte tensor that byte tensor \p b is an elementwise function of:
/// through a per-tensor Quantize or a constant TableLookup whose operand is
/// a function of one byte tensor, else \p b itself.
NodeValue byteSource(NodeValue b, unsigned &budget) {
  NodeValue inner;
  if (auto *q = llvm::dyn_cast<QuantizeNode>(b.getNode());
      q && q->getScale().dims()[0] == 1)
    inner = q->getInput();
  else if (TableLookupNode *t = constantLookup(b))
    inner = t->getInput();
  Walk sub{budget};
  if (inner && walkValue(inner, sub) && sub.x && isByte(sub.x))
    return sub.x;
  return b;
}

/// True when \p v is an elementwise function of one byte tensor (recorded
/// in \p w) of the forms in the file comment.
bool walkValue(NodeValue v, Walk &w) {
  if (w.budget == 0 || --w.budget == 0)
    return false;
  Node *n = v.getNode();
  if (llvm::isa<SplatNode>(n) || uniformConstant(v) ||
      broadcastScalar(v, w.budget))
    return true;
  if (isByte(v))
    return w.leaf(byteSource(v, w.budget));
  if (auto *d = llvm::dyn_cast<DequantizeNode>(n))
    return d->getScale().dims()[0] == 1 && isByte(d->getInput()) &&
           w.leaf(byteSource(d->getInput(), w.budget));
  if (llvm::isa<QuantizeNode>(n) || !isElementwise(*n))
    return false;
  for (unsigned i = 0, e = n->getNumInputs(); i < e; ++i)
    if (!walkValue(n->getNthInput(i), w))
      return false;
  return true;
}

/// The expression behind \p v with its leaf \p x replaced by \p bytes (the
/// 256 values), every Splat made [256]: the table's subgraph.
class TableBuilder {
public:
  TableBuilder(Function &F, NodeValue x, NodeValue bytes, std::string name)
      : F_(F), name_(std::move(name)) {
    done_[x] = bytes;
  }

  NodeValue build(NodeValue v) {
    auto it = done_.find(v);
    if (it != done_.end())
      return it->second;
    NodeValue r = make(v);
    done_[v] = r;
    return r;
  }

private:
  NodeValue make(NodeValue v) {
    Node *n = v.getNode();
    std::string name = name_ + "." + n->getName().str();
    if (auto *s = llvm::dyn_cast<SplatNode>(n))
      return F_.createSplat(name, {256}, s->getElemTy(), s->getValue());
    if (std::optional<float> u = uniformConstant(v))
      return F_.createSplat(name, {256}, v.getElemKind(), *u);
    unsigned budget = kMaxConstantNodes;
    if (NodeValue one = broadcastScalar(v, budget))
      return F_.createBroadcast(name, F_.createReshape(name + ".one", one, {1}),
                                {256});
    if (auto *d = llvm::dyn_cast<DequantizeNode>(n))
      return F_.createDequantize(name, build(d->getInput()), d->getScale(),
                                 d->getZero(), 0);
    if (auto *q = llvm::dyn_cast<QuantizeNode>(n))
      return F_.createQuantize(name, build(q->getInput()), q->getScale(),
                               q->getZero(), 0, q->getElemTy());
    if (TableLookupNode *t = constantLookup(v))
      return F_.createTableLookup(name, t->getTable(), build(t->getInput()));
    llvm::SmallVector<NodeValue, 4> in;
    for (unsigned i = 0, e = n->getNumInputs(); i < e; ++i)
      in.push_back(build(n->getNthInput(i)));
    return createLike(F_, *n, in, n->getAttrs())->getNthResult(0);
  }

  Function &F_;
  std::string name_;
  std::map<NodeValue, NodeValue> done_;
};

} // namespace

NodeValue qdq::foldQuantizedTable(Function &F, QuantizeNode *q) {
  Node *f = q->getInput().getNode();
  if (q->getScale().dims()[0] != 1 || !hasOneUse(f) || !isElementwise(*f) ||
      f->getNthResult(0).getElemKind() != ElemKind::Float32)
    return NodeValue();
  unsigned budget = kMaxTableNodes;
  Walk w{budget};
  if (!walkValue(q->getInput(), w) || !w.x || !isByte(w.x) ||
      w.x.dims() != q->getResult().dims())
    return NodeValue();
  std::string name = f->getName().str() + ".table";
  TableBuilder tb(F, w.x, allBytes(F, name + ".in", w.x.getElemKind()), name);
  NodeValue table =
      F.createQuantize(name, tb.build(q->getInput()), q->getScale(),
                       q->getZero(), 0, q->getElemTy());
  return F.createTableLookup(name + ".lookup", table, w.x);
}
