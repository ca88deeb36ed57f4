//===- MatMulTiling.h - MatMul tile, block and task rule -------*- C++ -*-===//
//
// The shape of libjit's MatMul micro-kernel, its K block and the split of
// a product into parallel tasks, as pure functions of the target's vector
// lanes, vector registers and cache sizes.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKENDS_CPU_MATMULTILING_H
#define EMBER_BACKENDS_CPU_MATMULTILING_H

#include "libjit/LibjitABI.h"

#include <cstdint>

namespace ember {
struct TargetDesc;

namespace cpu {

/// What the MatMul rule reads of the target.
struct MatMulTarget {
  int64_t lanes;   ///< floats per vector register
  int64_t vregs;   ///< vector registers
  int64_t l1Bytes; ///< L1 data cache per core
  int64_t l2Bytes; ///< L2 cache per core
};

/// What the rule reads of \p T: the lanes and registers of the libjit
/// kernel family \p T runs (useWideKernels: 16 lanes and 32 registers, or
/// 8 and 16) and its per-core L1d and L2 (TargetDesc: read from sysfs for
/// the host, the ISA level's documented defaults otherwise).
MatMulTarget matMulTarget(const TargetDesc &T);

/// Tile and block sizes of one MatMul (libjit's MatMul.inc).
struct MatMulTiling {
  int64_t rows;      ///< MR: rows of A per tile (broadcast operands)
  int64_t vectors;   ///< V: vectors of B per tile row
  int64_t panelCols; ///< NR = V * lanes: columns per B panel
  int64_t kBlock;    ///< K rows per block (a panel block stays in L1)
};

/// The longest K block libjit copies an unpacked B's partial panel in.
inline constexpr int64_t kMatMulMaxKC = libjit::kMatMulMaxKC;

/// The tile that does the most multiply-adds per load (MR * V FMAs per
/// MR broadcasts plus V vector loads) with MR * V accumulators, V vectors
/// of B and one broadcast in registers (V a power of two, MR at most 6);
/// K blocked so that a panel block
/// (kBlock x NR floats) fills 3/4 of L1, leaving the rest to the rows of
/// A and the tile of C.
MatMulTiling chooseMatMulTiling(const MatMulTarget &T);

/// The K block of a product of depth \p K: the rule's kBlock, or less, so
/// that the blocks are of equal length (a short last block would store and
/// reload the C tiles for little work).
inline int64_t matMulKBlock(int64_t K, const MatMulTiling &t) {
  int64_t blocks = (K + t.kBlock - 1) / t.kBlock;
  return blocks > 1 ? (K + blocks - 1) / blocks : t.kBlock;
}

/// Floats of an A of \p m rows and depth \p K packed in tiles of \p mr
/// rows (ember_matmul_pack_a_f32: K rounded up to whole chunks).
inline int64_t matMulPackedLHSFloats(int64_t m, int64_t K, int64_t mr) {
  int64_t c = libjit::kMatMulPackK;
  return (m + mr - 1) / mr * mr * ((K + c - 1) / c * c);
}

/// Whether A is packed into row tiles first (packMatMulLHS in CPU.h): where
/// each panel group's task reads the \p rows rows of its row block again
/// from beyond L2 (they exceed half of it: a thread's consecutive tasks
/// share the row block) in more than one K block (each block of a
/// row-major A is MR runs of at most kBlock floats, K floats apart, too
/// short for the hardware prefetchers to follow; packed, it is one run),
/// for three panels or more (the copy reads and writes A once, two passes
/// over it, which pays only where the panels read A more often than that).
inline bool matMulPacksLHS(int64_t rows, int64_t K, int64_t panels,
                           const MatMulTiling &t, const MatMulTarget &T) {
  return rows >= t.rows && K > t.kBlock && panels > 2 &&
         rows * K * int64_t(sizeof(float)) > T.l2Bytes / 2;
}

/// The parallel tasks of an m-row product of \p panels B panels: each task
/// is rowsPerTask rows (a multiple of the tile rows) of panelsPerTask
/// panels.
struct MatMulTasks {
  int64_t rowsPerTask, rowTasks, panelsPerTask, colTasks;
};

/// One panel per task (so that every row of a task passes over the same
/// panel block in L1 and B is read once per row task); rows split so that
/// the rows of A a task reads per K block stay in half of L2 and so that
/// there are at least kMatMulMinTasks tasks where the rows allow, an even
/// number where there are few (two threads then get equal shares).
MatMulTasks splitMatMul(int64_t m, int64_t panels, const MatMulTiling &t,
                        const MatMulTarget &T);

/// Whether the tiles prefetch the next block of a packed B of \p floats
/// floats: where it exceeds half of L2 it cannot stay cached from one run
/// (or layer) to the next and is streamed from memory, a block at a time.
inline bool prefetchMatMulRHS(int64_t floats, const MatMulTarget &T) {
  return floats * int64_t(sizeof(float)) > T.l2Bytes / 2;
}

/// Tasks a product is split into at least (when it has the rows), so that
/// a team of threads gets balanced shares (as kConvMinTasks).
inline constexpr int64_t kMatMulMinTasks = 8;

} // namespace cpu
} // namespace ember

#endif // EMBER_BACKENDS_CPU_MATMULTILING_H
