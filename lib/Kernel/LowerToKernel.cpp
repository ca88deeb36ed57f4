//===- LowerToKernel.cpp - Planned IR to kernels, with fusion -------------===//
#include "ember/Kernel/LowerToKernel.h"
#include "ember/Kernel/KernelText.h"

#include "KernelRules.h"

#include "ember/Base/Error.h"

#include "llvm/ADT/DenseSet.h"

#include <map>
#include <numeric>

using namespace ember;
using namespace ember::kir;

Buffer kir::bufferFor(Value *v, const MemoryPlan &plan) {
  Placement p = plan.locate(v);
  return Buffer{p.region, p.offset, v->getType()->sizeInBytes(),
                v->getType()->getElemKind(), v->getName().str()};
}

int64_t kir::checkStatusOffset(const IRFunction &F, const MemoryPlan &plan) {
  const Module *M = F.getModule();
  const Placeholder *p = M ? M->getCheckStatus() : nullptr;
  if (!p)
    return -1;
  for (const auto &w : F.getWeights())
    if (!w->isConstant() && w->getName() == p->getName())
      return int64_t(plan.placements.lookup(w.get()).offset);
  return -1;
}

namespace {
/// A byte range in one region.
struct Range {
  Region region;
  uint64_t begin, end;
  bool overlaps(const Range &o) const {
    return region == o.region && begin < o.end && o.begin < end;
  }
  bool operator==(const Range &o) const {
    return region == o.region && begin == o.begin && end == o.end;
  }
};

Range rangeOf(const Buffer &b) {
  return Range{b.region, b.offset, b.offset + b.size};
}

/// A Broadcast whose result is not materialized: elementwise readers load
/// its source at an index computed from their flat index instead.
struct VirtualBroadcast {
  const Instruction *inst;
  const Value *origin; ///< The broadcast's result buffer.
  Buffer src;
  llvm::SmallVector<dim_t, kMaxRank> dims, outStrides, srcStrides;
  bool materialized = false;
  bool dead = false; ///< Deallocated: every reader has been seen.
  /// Overwritten in full by a later instruction (in-place reuse): the
  /// buffer no longer holds the broadcast.
  bool retired = false;
};

/// The virtual broadcast that \p v reads in full, if any.
VirtualBroadcast *findVirtual(std::vector<VirtualBroadcast> &vbs, Value *v) {
  for (VirtualBroadcast &vb : vbs)
    if (!vb.materialized && !vb.retired && vb.origin == getOrigin(v) &&
        getOriginOffset(v) == 0 &&
        v->getType()->size() == vb.inst->getOperand(0).value->getType()->size())
      return &vb;
  return nullptr;
}

/// Builds one fused loop from consecutive elementwise instructions.
class FusionGroup {
public:
  FusionGroup(const MemoryPlan &plan,
              const llvm::DenseMap<const Value *, unsigned> &readers,
              std::vector<VirtualBroadcast> &virtuals)
      : plan_(plan), readers_(readers), virtuals_(virtuals) {}

  bool empty() const { return instrs_.empty(); }

  /// True if \p I can join: same element count and no partial overlap of
  /// its buffers with what the group reads or writes.
  bool accepts(const Instruction &I) const {
    if (instrs_.empty())
      return true;
    if (I.getOperand(0).value->getType()->size() != numElements_)
      return false;
    Range dest = rangeOf(bufferFor(I.getOperand(0).value, plan_));
    for (const Range &r : loaded_)
      if (dest.overlaps(r) && !(dest == r))
        return false;
    for (const auto &s : stored_)
      if (dest.overlaps(s.first) && !(dest == s.first))
        return false;
    for (unsigned n = 1; n < I.getNumOperands(); ++n) {
      Range in = rangeOf(bufferFor(I.getOperand(n).value, plan_));
      for (const auto &s : stored_)
        if (in.overlaps(s.first) && !(in == s.first))
          return false;
    }
    return true;
  }

  /// True if \p I touches nothing the group reads or writes, so that it may
  /// run before the whole group.
  bool independentOf(const Instruction &I) const {
    for (unsigned n = 0; n < I.getNumOperands(); ++n) {
      Value *v = I.getOperand(n).value;
      VirtualBroadcast *vb = n ? findVirtual(virtuals_, v) : nullptr;
      Range r = rangeOf(vb ? vb->src : bufferFor(v, plan_));
      for (const auto &s : stored_)
        if (r.overlaps(s.first))
          return false;
      if (n == 0)
        for (const Range &l : loaded_)
          if (r.overlaps(l))
            return false;
    }
    return true;
  }

  /// True if an instruction of the group writes into \p r.
  bool writes(const Range &r) const {
    for (const auto &s : stored_)
      if (s.first.overlaps(r))
        return true;
    return false;
  }

  /// Appends \p I (accepts(I) must hold).
  void add(const Instruction &I) {
    numElements_ = I.getOperand(0).value->getType()->size();
    for (unsigned n = 1; n < I.getNumOperands(); ++n) {
      Value *v = I.getOperand(n).value;
      VirtualBroadcast *vb = findVirtual(virtuals_, v);
      loaded_.push_back(rangeOf(vb ? vb->src : bufferFor(v, plan_)));
      // Resolved now: a later instruction may overwrite the broadcast's
      // buffer (in-place reuse) and retire it before the group is emitted.
      if (vb)
        virtualReads_[{&I, n}] = *vb;
    }
    stored_.push_back(
        {rangeOf(bufferFor(I.getOperand(0).value, plan_)), nullptr});
    instrs_.push_back(&I);
  }

  /// Emits the fused kernel and clears the group.
  Kernel finish();

private:
  const MemoryPlan &plan_;
  const llvm::DenseMap<const Value *, unsigned> &readers_;
  std::vector<VirtualBroadcast> &virtuals_;
  std::vector<const Instruction *> instrs_;
  dim_t numElements_ = 0;
  std::vector<Range> loaded_;
  std::vector<std::pair<Range, ExprRef>> stored_;
  std::map<std::pair<const Instruction *, unsigned>, VirtualBroadcast>
      virtualReads_;

  /// The virtual broadcast operand \p op of \p I read when it joined.
  const VirtualBroadcast *virtualRead(const Instruction *I, unsigned op) const {
    auto it = virtualReads_.find({I, op});
    return it == virtualReads_.end() ? nullptr : &it->second;
  }
};
} // namespace

/// Elements per row of \p vb's result after its last broadcast-varying
/// dimension: within such a row the source element is fixed.
static dim_t innerRow(const VirtualBroadcast &vb) {
  dim_t inner = 1;
  for (size_t d = vb.dims.size(); d-- > 0;) {
    if (vb.srcStrides[d] && vb.dims[d] != 1)
      break;
    inner *= vb.dims[d];
  }
  return inner;
}

/// Elements of \p vb's result in its trailing dims that all vary with the
/// source (a bias row repeated over the leading dims): within such a block
/// the source index advances with the result's, so rows of it vectorize.
static dim_t trailingBlock(const VirtualBroadcast &vb) {
  dim_t block = 1;
  for (size_t d = vb.dims.size(); d-- > 0;) {
    if (!vb.srcStrides[d] && vb.dims[d] != 1)
      break;
    block *= vb.dims[d];
  }
  return block;
}

/// The row length a fused loop may take for \p vb: the run within which its
/// source element is fixed, else the trailing block its source follows.
static dim_t rowLength(const VirtualBroadcast &vb) {
  dim_t inner = innerRow(vb);
  return inner > 1 ? inner : trailingBlock(vb);
}

/// Loads the element at column \p col of row \p row of \p inner elements
/// of a virtual broadcast's result (inner divides rowLength(vb)) from its
/// source. In a trailing block the dims inside it add row-major offsets of
/// (row * inner + col) % block; the dims outside, and every dim of a run of
/// fixed source elements, come from the row alone.
static ExprRef broadcastLoad(Kernel &k, const VirtualBroadcast &vb, ExprRef row,
                             ExprRef col, dim_t inner) {
  bool fixed = innerRow(vb) > 1;
  dim_t block = fixed ? 1 : trailingBlock(vb);
  ExprRef src = k.constInt(0);
  for (size_t d = 0; d < vb.dims.size(); ++d) {
    if (!vb.srcStrides[d] || vb.dims[d] == 1 || vb.outStrides[d] < block)
      continue;
    dim_t step = vb.outStrides[d] / inner;
    ExprRef coord =
        step == 1 ? row : k.binary(BinOp::Div, row, k.constInt(step));
    if (d > 0)
      coord = k.binary(BinOp::Rem, coord, k.constInt(vb.dims[d]));
    src = k.add(src, k.mul(coord, vb.srcStrides[d]));
  }
  if (!fixed) {
    ExprRef within = col;
    if (block > inner)
      within = k.add(
          k.mul(k.binary(BinOp::Rem, row, k.constInt(block / inner)), inner),
          col);
    src = k.add(src, within);
  }
  return k.load(k.addBuffer(vb.src), src);
}

Kernel FusionGroup::finish() {
  std::string name = instrs_.front()->getName().str();
  if (instrs_.size() > 1)
    name += ".fused" + std::to_string(instrs_.size());
  Kernel k(name);
  k.setSources(instrs_);
  // With virtual broadcasts, loop over rows of `inner` elements so that their
  // source index is computed once per row and the inner loop vectorizes.
  dim_t inner = 0;
  for (const Instruction *I : instrs_)
    for (unsigned op = 1; op < I->getNumOperands(); ++op)
      if (const VirtualBroadcast *vb = virtualRead(I, op))
        inner = std::gcd(inner, rowLength(*vb));
  if (inner == 0)
    inner = numElements_;
  unsigned colVar = k.newVar(), rowVar = k.newVar();
  ExprRef row = k.var(rowVar);
  ExprRef idx = inner == numElements_ ? k.var(colVar)
                                      : k.add(k.mul(row, inner), k.var(colVar));
  std::vector<std::pair<Range, ExprRef>> values;
  std::vector<Stmt> body;
  for (size_t n = 0; n < instrs_.size(); ++n) {
    const Instruction &I = *instrs_[n];
    ExprRef v = elementwiseValue(k, I, idx, [&](unsigned op) {
      if (const VirtualBroadcast *vb = virtualRead(&I, op))
        return broadcastLoad(k, *vb, row, k.var(colVar), inner);
      Buffer b = bufferFor(I.getOperand(op).value, plan_);
      Range r = rangeOf(b);
      for (auto it = values.rbegin(); it != values.rend(); ++it)
        if (it->first == r)
          return it->second;
      return k.load(k.addBuffer(b), idx);
    });
    Value *dest = I.getOperand(0).value;
    Buffer db = bufferFor(dest, plan_);
    // A value later instructions read is computed once into a local: its
    // expression may load a buffer that this group stores to afterwards
    // (in-place reuse), so re-evaluating it there would see the new data.
    if (n + 1 < instrs_.size()) {
      unsigned loc = k.addLocal(db.kind);
      body.push_back(Kernel::assign(loc, v));
      v = k.local(loc);
    }
    values.push_back({rangeOf(db), v});
    // An activation read only inside the group needs no store; the last
    // instruction always stores.
    Value *origin = getOrigin(dest);
    auto rd = readers_.find(origin);
    unsigned inGroupReads = 0;
    for (size_t m = n + 1; m < instrs_.size(); ++m)
      for (unsigned op = 1; op < instrs_[m]->getNumOperands(); ++op)
        inGroupReads += getOrigin(instrs_[m]->getOperand(op).value) == origin;
    bool internal = llvm::isa<AllocActivationInst>(origin) &&
                    rd != readers_.end() && rd->second == inGroupReads &&
                    getOriginOffset(dest) == 0 && n + 1 < instrs_.size();
    if (!internal)
      body.push_back(Kernel::store(k.addBuffer(db), idx, v));
  }
  if (inner == numElements_) // one flat parallel loop
    k.body() = {
        Kernel::loop(colVar, inner, /*parallel=*/true, std::move(body))};
  else
    k.body() = {Kernel::loop(
        rowVar, numElements_ / inner, /*parallel=*/true,
        {Kernel::loop(colVar, inner, /*parallel=*/false, std::move(body))})};
  instrs_.clear();
  loaded_.clear();
  stored_.clear();
  virtualReads_.clear();
  return k;
}

/// Counts, for each origin buffer, the operand slots that read it.
static llvm::DenseMap<const Value *, unsigned>
countReaders(const IRFunction &F) {
  llvm::DenseMap<const Value *, unsigned> readers;
  for (auto &I : F.getInstrs()) {
    if (llvm::isa<TensorViewInst>(*I) || llvm::isa<DeallocActivationInst>(*I))
      continue;
    for (const Operand &op : I->getOperands())
      if (op.role != OperandRole::Out)
        ++readers[getOrigin(op.value)];
  }
  return readers;
}

/// True if \p I may be left virtual: a Broadcast into a whole activation.
static bool canVirtualize(const Instruction &I) {
  if (!llvm::isa<BroadcastInst>(I))
    return false;
  Value *dest = I.getOperand(0).value;
  return llvm::isa<AllocActivationInst>(getOrigin(dest)) &&
         getOriginOffset(dest) == 0 && dest->getType()->size() > 0;
}

static VirtualBroadcast makeVirtual(const Instruction &I,
                                    const MemoryPlan &plan) {
  VirtualBroadcast vb;
  vb.inst = &I;
  vb.origin = getOrigin(I.getOperand(0).value);
  vb.src = bufferFor(I.getOperand(1).value, plan);
  TypeRef out = I.getOperand(0).value->getType();
  TypeRef in = I.getOperand(1).value->getType();
  vb.dims.assign(out->dims().begin(), out->dims().end());
  vb.outStrides = out->strides();
  vb.srcStrides = in->strides();
  for (unsigned d = 0; d < in->rank(); ++d)
    if (in->dims()[d] == 1)
      vb.srcStrides[d] = 0;
  return vb;
}

/// True if \p I must see virtual broadcast \p vb materialized first: it
/// overwrites the source, or reads the result other than elementwise.
static bool needsMaterialized(const Instruction &I, const VirtualBroadcast &vb,
                              const MemoryPlan &plan) {
  Range src = rangeOf(vb.src);
  for (const Operand &op : I.getOperands()) {
    if (op.role != OperandRole::In &&
        rangeOf(bufferFor(op.value, plan)).overlaps(src))
      return true;
    // A write over part of the result keeps the rest of it live.
    if (op.role != OperandRole::In && getOrigin(op.value) == vb.origin &&
        (getOriginOffset(op.value) != 0 ||
         op.value->getType()->size() !=
             vb.inst->getOperand(0).value->getType()->size()))
      return true;
    if (op.role != OperandRole::Out && getOrigin(op.value) == vb.origin &&
        !(isElementwise(I) && getOriginOffset(op.value) == 0 &&
          op.value->getType()->size() ==
              I.getOperand(0).value->getType()->size()))
      return true;
  }
  return false;
}

/// The copy that materializes \p vb into its own buffer, reading vb.src
/// (which a snapshot may have moved away from the Broadcast's operand).
static Kernel materializeVirtual(const VirtualBroadcast &vb,
                                 const MemoryPlan &plan) {
  Kernel k(vb.inst->getName());
  unsigned out = k.addBuffer(bufferFor(vb.inst->getOperand(0).value, plan));
  unsigned in = k.addBuffer(vb.src);
  llvm::SmallVector<dim_t, kMaxRank> dims(vb.dims);
  if (dims.empty())
    dims.push_back(1); // a scalar: one iteration, strides unused
  k.body() = loopNest(k, dims, [&](llvm::ArrayRef<ExprRef> c) {
    ExprRef oi = k.constInt(0), ii = k.constInt(0);
    for (size_t d = 0; d < vb.dims.size(); ++d) {
      oi = k.add(oi, k.mul(c[d], vb.outStrides[d]));
      ii = k.add(ii, k.mul(c[d], vb.srcStrides[d]));
    }
    return std::vector<Stmt>{Kernel::store(out, oi, k.load(in, ii))};
  });
  return k;
}

/// If \p I only overwrites the (small) source of \p vb, copies the source
/// to scratch and retargets \p vb there, returning the copy kernel.
static std::optional<Kernel>
snapshotSource(const Instruction &I, VirtualBroadcast &vb,
               std::vector<VirtualBroadcast> &virtuals,
               ScratchAllocator scratch) {
  constexpr uint64_t kMaxSnapshot = 1 << 16;
  if (!scratch || vb.src.size > kMaxSnapshot)
    return std::nullopt;
  for (const Operand &op : I.getOperands())
    if (op.role != OperandRole::Out && getOrigin(op.value) == vb.origin &&
        !(isElementwise(I) && findVirtual(virtuals, op.value)))
      return std::nullopt; // a reader that needs the buffer: materialize
  std::optional<Buffer> snap = scratch(vb.src.size);
  if (!snap)
    return std::nullopt;
  snap->kind = vb.src.kind;
  snap->name = vb.src.name + ".snapshot";
  Kernel k(snap->name);
  unsigned to = k.addBuffer(*snap), from = k.addBuffer(vb.src);
  unsigned v = k.newVar();
  k.body() = {
      Kernel::loop(v, vb.src.size / elemSize(vb.src.kind), /*parallel=*/true,
                   {Kernel::store(to, k.var(v), k.load(from, k.var(v)))})};
  vb.src = *snap;
  return k;
}

llvm::Expected<std::vector<Kernel>>
kir::lowerToKernels(const IRFunction &F, const MemoryPlan &plan,
                    CustomLowering custom, ScratchAllocator scratch,
                    llvm::function_ref<bool(const Instruction &)> absorbed) {
  std::vector<Kernel> out;
  auto readers = countReaders(F);
  std::vector<VirtualBroadcast> virtuals;
  // `group` is the current fused loop; `side` collects elementwise work of
  // another size that is independent of it (BatchNorm's per-channel scale
  // and shift, say) and runs before it, so the group is not cut in two.
  FusionGroup group(plan, readers, virtuals), side(plan, readers, virtuals);
  auto flush = [&] {
    if (!side.empty())
      out.push_back(side.finish());
    if (!group.empty())
      out.push_back(group.finish());
  };
  // Kernels emitted for an instruction without sources of their own (the
  // shared structured lowerings, a backend's) do that instruction's work.
  auto tagSources = [&](size_t from, const Instruction &I) {
    for (size_t i = from; i < out.size(); ++i)
      if (out[i].getSources().empty())
        out[i].setSources({&I});
  };
  for (auto &ip : F.getInstrs()) {
    const Instruction &I = *ip;
    if (auto *d = llvm::dyn_cast<DeallocActivationInst>(&I)) {
      for (VirtualBroadcast &vb : virtuals)
        vb.dead |= vb.origin == d->getAlloc();
      continue;
    }
    if (llvm::isa<AllocActivationInst>(I) || llvm::isa<TensorViewInst>(I) ||
        (absorbed && absorbed(I)))
      continue;
    // A loop's body runs again: a snapshot or copy of a virtual broadcast
    // made inside it would be redone from a source the first iteration may
    // have overwritten, so every live virtual broadcast made before a loop
    // is materialized before it.
    if (I.getKind() == ValueKind::LoopBeginInst)
      for (VirtualBroadcast &vb : virtuals)
        if (!vb.materialized && !vb.dead && !vb.retired) {
          flush();
          out.push_back(materializeVirtual(vb, plan));
          out.back().setSources({vb.inst});
          vb.materialized = true;
        }
    for (VirtualBroadcast &vb : virtuals)
      if (!vb.materialized && !vb.dead && !vb.retired &&
          needsMaterialized(I, vb, plan)) {
        // The copy must follow the source's producer, which may be pending.
        if (group.writes(rangeOf(vb.src)))
          flush();
        else if (!side.empty())
          out.push_back(side.finish());
        if (auto snap = snapshotSource(I, vb, virtuals, scratch)) {
          snap->setSources({vb.inst});
          out.push_back(std::move(*snap)); // runs before the pending group
          continue;
        }
        flush();
        out.push_back(materializeVirtual(vb, plan));
        out.back().setSources({vb.inst});
        vb.materialized = true;
      }
    if (canVirtualize(I)) {
      virtuals.push_back(makeVirtual(I, plan));
      continue;
    }
    // After I, a virtual broadcast whose whole buffer I overwrites (in-place
    // reuse of that buffer) no longer describes the buffer's contents.
    auto retireOverwritten = [&] {
      for (VirtualBroadcast &vb : virtuals)
        for (const Operand &op : I.getOperands())
          if (op.role != OperandRole::In && getOrigin(op.value) == vb.origin)
            vb.retired = true;
    };
    if (isElementwise(I) && I.getOperand(0).value->getType()->size() > 0) {
      if (group.accepts(I)) {
        group.add(I);
      } else if (!group.empty() && group.independentOf(I) && side.accepts(I)) {
        side.add(I);
      } else {
        flush();
        group.add(I);
      }
      retireOverwritten();
      continue;
    }
    flush();
    if (isElementwise(I))
      continue; // empty tensor: nothing to compute
    size_t from = out.size();
    EMBER_ASSIGN_OR_RETURN(bool claimed, custom(I, out));
    if (claimed || lowerStructured(I, plan, out)) {
      tagSources(from, I);
      retireOverwritten();
      continue;
    }
    return makeErrorF("no kernel lowering for {0} ({1})", I.getName(),
                      I.getKindName());
  }
  flush();
  // Renderers trust the kernels' typing and scoping; a lowering that broke
  // them is an internal error named here rather than wrong code later.
  for (const Kernel &k : out)
    if (llvm::Error err = verifyKernel(k))
      return makeError("internal error: invalid kernel: " +
                       llvm::toString(std::move(err)));
  return out;
}
