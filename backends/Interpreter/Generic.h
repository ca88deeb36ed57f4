//===- Generic.h - Kind-generic buffer access for kernels ------*- C++ -*-===//
//
// The kernels added for ONNX breadth (Math.cpp, Reduce.cpp, Indexing.cpp,
// Window.cpp) work on any plain element kind by reading and writing
// elements as double through Buf. They favour clarity over speed: the
// Interpreter is the oracle, and float32 hot paths stay in the older files.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_INTERPRETER_GENERIC_H
#define EMBER_BACKENDS_INTERPRETER_GENERIC_H

#include "Kernels.h"

#include "ember/Base/ElemAccess.h"

#include <algorithm>

namespace ember {
namespace interp {

/// One IR value's buffer with its type.
struct Buf {
  char *p;
  const Type *t;
  Buf(const ExecContext &ctx, Value *v) : p(ctx.addr(v)), t(v->getType()) {}
  ElemKind kind() const { return t->getElemKind(); }
  dim_t size() const { return t->size(); }
  llvm::ArrayRef<dim_t> dims() const { return t->dims(); }
  double ld(dim_t i) const { return loadElement(p, kind(), i); }
  int64_t ldInt(dim_t i) const { return loadElementInt(p, kind(), i); }
  void st(dim_t i, double v) const { storeElement(p, kind(), i, v); }
};

/// Row-major coordinates of flat index \p flat in \p dims.
inline void unflatten(dim_t flat, llvm::ArrayRef<dim_t> dims,
                      llvm::SmallVectorImpl<dim_t> &coord) {
  coord.resize(dims.size());
  for (int i = int(dims.size()) - 1; i >= 0; --i) {
    coord[i] = flat % dims[i];
    flat /= dims[i];
  }
}

/// Flat index of \p coord in \p dims.
inline dim_t flatten(llvm::ArrayRef<dim_t> coord, llvm::ArrayRef<dim_t> dims) {
  dim_t f = 0;
  for (size_t i = 0; i < dims.size(); ++i)
    f = f * dims[i] + coord[i];
  return f;
}

/// Taps t in [0, k) of a window along one axis with \p base + t * \p dil
/// below \p limit: the pooling kernels walk a window's taps over the input
/// only, since a legal window may be far larger than the input. The count
/// ceil(room / dil) is taken as 1 + (room - 1) / dil, which cannot overflow:
/// an axis of one tap may have any dilation, 2^63 - 1 included.
inline dim_t tapsBelow(dim_t limit, dim_t base, dim_t dil, dim_t k) {
  dim_t room = limit - base;
  return room <= 0 ? 0 : std::min(k, 1 + (room - 1) / dil);
}

/// Splits \p dims at \p axis into outer * dims[axis] * inner.
inline void splitAt(llvm::ArrayRef<dim_t> dims, unsigned axis, dim_t &outer,
                    dim_t &inner) {
  outer = inner = 1;
  for (unsigned i = 0; i < axis; ++i)
    outer *= dims[i];
  for (unsigned i = axis + 1; i < dims.size(); ++i)
    inner *= dims[i];
}

// Per-family entry points; each returns false for instructions it does not
// handle.
bool executeMath(const Instruction &I, const ExecContext &ctx);
bool executeReduce(const Instruction &I, const ExecContext &ctx);
bool executeIndexing(const Instruction &I, const ExecContext &ctx);
bool executeWindow(const Instruction &I, const ExecContext &ctx);

} // namespace interp
} // namespace ember

#endif
