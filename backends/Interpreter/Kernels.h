//===- Kernels.h - Reference kernels of the Interpreter --------*- C++ -*-===//
#ifndef EMBER_BACKENDS_INTERPRETER_KERNELS_H
#define EMBER_BACKENDS_INTERPRETER_KERNELS_H

#include "ember/IR/MemoryPlanner.h"

#include <vector>

namespace ember {
namespace interp {

/// Resolves IR values to addresses in the three regions of one run.
class ExecContext {
public:
  ExecContext(const MemoryPlan &plan, char *constants, char *mutables,
              char *activations)
      : plan_(plan), bases_{constants, mutables, activations} {}
  char *addr(Value *v) const {
    Placement p = plan_.locate(v);
    return bases_[unsigned(p.region)] + p.offset;
  }
  template <typename T> T *ptr(Value *v) const {
    return reinterpret_cast<T *>(addr(v));
  }

private:
  const MemoryPlan &plan_;
  char *bases_[3];
};

/// The offset of the matrix of a MatMul operand with batch dims \p op for
/// flat batch index \p bi of the result's batch dims \p out (a dim of 1
/// against a larger one is broadcast), each matrix \p matrix elements.
dim_t batchOffset(dim_t bi, llvm::ArrayRef<dim_t> out, llvm::ArrayRef<dim_t> op,
                  dim_t matrix);

/// C = A * B over the last two dims of MatMul \p I, its operands stored as
/// \p T and read as float through \p load, each sum taken in increasing k
/// (the order the reference defines); broadcast batch dims and a
/// transposed B are read in place.
template <typename T, typename Load>
void matMulLoop(const MatMulInst &I, const ExecContext &ctx, Load load) {
  TypeRef ta = I.getLHS()->getType(), tb = I.getRHS()->getType();
  TypeRef tc = I.getDest()->getType();
  unsigned r = ta->rank();
  dim_t m = ta->dims()[r - 2], k = ta->dims()[r - 1], n = tc->dims()[r - 1];
  dim_t batch = m * n != 0 ? tc->size() / (m * n) : 0;
  // B[p][j] of a plain RHS is at p * n + j, of a transposed one at j * k + p.
  dim_t pStride = I.getTransB() ? 1 : n, jStride = I.getTransB() ? k : 1;
  auto outBatch = tc->dims().drop_back(2);
  const T *a = ctx.ptr<T>(I.getLHS());
  const T *b = ctx.ptr<T>(I.getRHS());
  float *c = ctx.ptr<float>(I.getDest());
  for (dim_t bi = 0; bi < batch; ++bi) {
    const T *A = a + batchOffset(bi, outBatch, ta->dims().drop_back(2), m * k);
    const T *B = b + batchOffset(bi, outBatch, tb->dims().drop_back(2), k * n);
    float *C = c + bi * m * n;
    for (dim_t i = 0; i < m; ++i) {
      for (dim_t j = 0; j < n; ++j)
        C[i * n + j] = 0.f;
      for (dim_t p = 0; p < k; ++p) {
        float av = load(A[i * k + p]);
        for (dim_t j = 0; j < n; ++j)
          C[i * n + j] += av * load(B[p * pStride + j * jStride]);
      }
    }
  }
}

/// MatMul of BFloat16 operands into Float32 (MatMulBF16.cpp).
void matMulBF16(const MatMulInst &I, const ExecContext &ctx);

/// \p n BFloat16 values widened to Float32 (exact; MatMulBF16.cpp).
std::vector<float> widenBF16(const uint16_t *h, dim_t n);

/// \p n Float32 values rounded to BFloat16 (nearest even, as a Cast) and
/// widened back.
std::vector<float> roundToBF16(const float *x, dim_t n);

/// True if the Interpreter has a kernel for \p op on element kind \p kind.
bool hasKernel(OpKind op, ElemKind kind);

/// Runs \p kernel on \p I if \p I is an \p InstT; says whether it was.
template <typename InstT>
bool runIfKind(const Instruction &I, const ExecContext &ctx,
               void (*kernel)(const InstT &, const ExecContext &)) {
  auto *inst = llvm::dyn_cast<InstT>(&I);
  if (inst)
    kernel(*inst, ctx);
  return inst;
}

/// Runs \p I on the one of \p kernels that takes its instruction class;
/// false if none does. A family file's entry point lists its kernels here.
template <typename... InstTs>
bool runKernelFor(const Instruction &I, const ExecContext &ctx,
                  void (*...kernels)(const InstTs &, const ExecContext &)) {
  return (runIfKind(I, ctx, kernels) || ...);
}

/// Executes one table instruction.
void executeOp(const Instruction &I, const ExecContext &ctx);

// Per-family entry points (Elementwise.cpp, Linear.cpp, DataMovement.cpp).
bool executeElementwise(const Instruction &I, const ExecContext &ctx);
bool executeLinear(const Instruction &I, const ExecContext &ctx);
bool executeDataMovement(const Instruction &I, const ExecContext &ctx);
/// ChannelShuffle (Shuffle.cpp).
bool executeShuffle(const Instruction &I, const ExecContext &ctx);
/// ReduceSum and ReduceMax (Reduce.cpp).
bool executeReduce(const Instruction &I, const ExecContext &ctx);
/// IntMatMul and IntConv (Quantized.cpp).
bool executeQuantized(const Instruction &I, const ExecContext &ctx);
/// ScaledSoftmax and Attention (Attention.cpp).
bool executeAttention(const Instruction &I, const ExecContext &ctx);

} // namespace interp
} // namespace ember

#endif
