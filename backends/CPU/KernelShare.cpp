//===- KernelShare.cpp - One compiled body for kernels of one shape -------===//
//
// Networks repeat themselves: every layer of a transformer, every block of a
// ResNet stage lowers to kernels that differ only in where their buffers
// lie. Compiling each copy again spent most of a transformer's compile time
// in LLVM's loop passes (docs/PerformanceHistory.md#code-generation); such
// kernels share one body that takes its buffers' addresses as arguments.
//
//===----------------------------------------------------------------------===//
#include "CPU.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace ember;
using namespace ember::kir;

static bool overlaps(const Buffer &a, const Buffer &b) {
  return a.region == b.region && a.offset < b.offset + b.size &&
         b.offset < a.offset + a.size;
}

cpu::BufferGroups cpu::groupBuffers(const Kernel &k) {
  const std::vector<Buffer> &bufs = k.getBuffers();
  BufferGroups g;
  g.groupOf.assign(bufs.size(), ~0u);
  // Overlap is transitive within a group: a buffer joins every group it
  // overlaps, merging them (few buffers per kernel: quadratic is fine).
  for (unsigned i = 0; i < bufs.size(); ++i) {
    for (unsigned j = 0; j < i; ++j) {
      if (!overlaps(bufs[i], bufs[j]))
        continue;
      unsigned from = g.groupOf[i], to = g.groupOf[j];
      if (from == to)
        continue;
      if (from == ~0u) {
        g.groupOf[i] = to;
        continue;
      }
      for (unsigned &x : g.groupOf)
        if (x == from)
          x = to;
    }
    if (g.groupOf[i] == ~0u)
      g.groupOf[i] = i;
  }
  // Number the groups by first member and find each group's lowest byte.
  llvm::DenseMap<unsigned, unsigned> number;
  for (unsigned i = 0; i < bufs.size(); ++i) {
    auto [it, fresh] = number.try_emplace(g.groupOf[i], g.bases.size());
    if (fresh)
      g.bases.push_back({bufs[i].region, bufs[i].offset});
    unsigned n = it->second;
    g.bases[n].offset = std::min(g.bases[n].offset, bufs[i].offset);
  }
  for (unsigned i = 0; i < bufs.size(); ++i)
    g.groupOf[i] = number[g.groupOf[i]];
  return g;
}

namespace {
/// Writes every field the renderer reads, exactly (float constants by their
/// bits); shared subexpressions by a back reference.
class KeyWriter {
public:
  explicit KeyWriter(llvm::raw_string_ostream &os) : os_(os) {}

  void expr(ExprRef e) {
    if (!e) {
      os_ << "_";
      return;
    }
    auto [it, fresh] = seen_.try_emplace(e, seen_.size());
    if (!fresh) {
      os_ << "#" << it->second;
      return;
    }
    uint64_t bits;
    std::memcpy(&bits, &e->fval, sizeof bits);
    os_ << "(" << unsigned(e->kind) << " " << unsigned(e->type) << " ";
    if (e->kind == ExprKind::Unary)
      os_ << unsigned(e->uop);
    else if (e->kind == ExprKind::Binary)
      os_ << unsigned(e->bop);
    os_ << " " << e->ival << " " << bits << " " << e->var << " " << e->buffer;
    expr(e->a);
    expr(e->b);
    expr(e->c);
    os_ << ")";
  }

  void stmts(const std::vector<Stmt> &body) {
    os_ << "{";
    for (const Stmt &s : body) {
      os_ << "[" << unsigned(s.kind) << " " << s.var << " " << s.extent << " "
          << s.parallel << " " << s.buffer << " ";
      expr(s.index);
      expr(s.value);
      expr(s.cond);
      stmts(s.body);
      os_ << s.callee << ":";
      for (const CallArg &a : s.args) {
        os_ << a.isBuffer << " " << a.buffer;
        expr(a.value);
      }
      os_ << "]";
    }
    os_ << "}";
  }

private:
  llvm::raw_string_ostream &os_;
  llvm::DenseMap<ExprRef, size_t> seen_;
};
} // namespace

std::string cpu::kernelShapeKey(const Kernel &k) {
  std::string key;
  llvm::raw_string_ostream os(key);
  BufferGroups g = groupBuffers(k);
  const std::vector<Buffer> &bufs = k.getBuffers();
  for (unsigned i = 0; i < bufs.size(); ++i)
    os << "b" << unsigned(bufs[i].kind) << " " << bufs[i].size << " "
       << g.groupOf[i] << " " << bufs[i].offset - g.bases[g.groupOf[i]].offset
       << ";";
  os << "l";
  for (ScalarKind kind : k.getLocals())
    os << unsigned(kind) << " ";
  os << "v" << k.getNumVars();
  KeyWriter(os).stmts(k.body());
  return key;
}
