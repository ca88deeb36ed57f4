//===- MatMulTiling.cpp - MatMul tile, block and task rule ----------------===//
#include "MatMulTiling.h"

#include "CPU.h"

#include <algorithm>

using namespace ember;
using namespace ember::cpu;

MatMulTarget cpu::matMulTarget(const TargetDesc &T) {
  bool wide = useWideKernels(T);
  // A target without cache sizes takes the smallest per-core caches of its
  // kernel family's CPUs, so that blocks chosen from them fit wherever the
  // code runs.
  int64_t l1 = T.l1dBytes ? int64_t(T.l1dBytes) : 32 << 10;
  int64_t l2 = T.l2Bytes ? int64_t(T.l2Bytes) : (wide ? 1 << 20 : 256 << 10);
  if (wide)
    return {16, 32, l1, l2};
  return {8, 16, l1, l2};
}

MatMulTiling cpu::chooseMatMulTiling(const MatMulTarget &T) {
  int64_t bestMR = 1, bestV = 1;
  double best = 0;
  // V a power of two: panels then divide the widths layers have (multiples
  // of 64 are the rule), so no padding columns are computed.
  for (int64_t v = 1; v < T.vregs; v *= 2) {
    // MR * V accumulators + V vectors of B + one broadcast.
    int64_t mr = (T.vregs - v - 1) / v;
    if (mr < 1)
      break;
    // At most 6 rows: libjit instantiates a remainder tile per row count
    // below MR (and no target here gains from taller tiles: with 32
    // registers V = 4 allows exactly 6, with 16 V = 2 does).
    mr = std::min<int64_t>(mr, 6);
    double perLoad = double(mr * v) / double(mr + v);
    if (perLoad > best) {
      best = perLoad;
      bestMR = mr;
      bestV = v;
    }
  }
  int64_t nr = bestV * T.lanes;
  int64_t kc = T.l1Bytes * 3 / 4 / (nr * int64_t(sizeof(float)));
  kc = std::clamp<int64_t>(kc / 8 * 8, 8, kMatMulMaxKC);
  return {bestMR, bestV, nr, kc};
}

MatMulTasks cpu::splitMatMul(int64_t m, int64_t panels, const MatMulTiling &t,
                             const MatMulTarget &T) {
  int64_t tiles = std::max<int64_t>(1, (m + t.rows - 1) / t.rows);
  int64_t maxTiles = std::max<int64_t>(
      1, T.l2Bytes / 2 / (t.kBlock * int64_t(sizeof(float)) * t.rows));
  int64_t rowTasks = (tiles + maxTiles - 1) / maxTiles;
  panels = std::max<int64_t>(1, panels);
  // Panels per task: the most that still leaves kMatMulMinTasks tasks, an
  // even number of them where the panels allow.
  int64_t perTask = 1;
  for (int64_t d = 2; d * kMatMulMinTasks <= panels * rowTasks; ++d)
    if (panels % d == 0 && panels / d % 2 == 0)
      perTask = d;
  int64_t colTasks = panels / perTask;
  if (rowTasks * colTasks < kMatMulMinTasks)
    rowTasks = (kMatMulMinTasks + colTasks - 1) / colTasks;
  if (rowTasks * colTasks % 2)
    ++rowTasks;
  rowTasks = std::min(rowTasks, tiles);
  // At least the wanted number of tasks: the last may be smaller (threads
  // that finish first take the tasks left of the others' shares).
  int64_t rowsPerTask = tiles / rowTasks;
  rowTasks = (tiles + rowsPerTask - 1) / rowsPerTask;
  return {rowsPerTask * t.rows, rowTasks, perTask, colTasks};
}
