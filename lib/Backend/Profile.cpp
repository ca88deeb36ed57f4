//===- Profile.cpp - Per-kernel run-time tables ---------------------------===//
#include "ember/Backend/Profile.h"
#include "ember/Graph/AttentionLayout.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"

#include <algorithm>

using namespace ember;

/// The two products of an Attention: 2 * (D + Dv) per visible
/// (query, key) pair, which a causal mask limits to the keys up to the
/// query's own.
static double attentionFlops(const AttentionInst &a) {
  AttnDims q = permutedDims(a.getQ()->getType()->dims(), a.getQPerm());
  AttnDims v = permutedDims(a.getV()->getType()->dims(), a.getVPerm());
  size_t r = q.size();
  double tq = double(q[r - 2]), d = double(q[r - 1]), dv = double(v[r - 1]);
  double tk = double(v[r - 2]), pairs = tq * tk;
  if (a.getCausal())
    pairs = tq <= tk ? tq * (tq + 1) / 2 : tk * (tk + 1) / 2 + (tq - tk) * tk;
  double batch = double(a.getQ()->getType()->size()) / (tq * d);
  return 2 * batch * pairs * (d + dv);
}

/// 2 * outputs * the filter's taps per output (its dims past the first).
static double convFlops(double out, Value *filter) {
  auto wd = filter->getType()->dims();
  double perOutput = 1;
  for (size_t d = 1; d < wd.size(); ++d)
    perOutput *= double(wd[d]);
  return 2 * out * perOutput;
}

/// 2 * outputs * the LHS's last dim (the sum's length).
static double matMulFlops(double out, Value *lhs) {
  return 2 * out * double(lhs->getType()->dims().back());
}

double ember::countFlops(const Instruction &I) {
  if (I.getNumOperands() == 0)
    return 0;
  if (auto *a = llvm::dyn_cast<AttentionInst>(&I))
    return attentionFlops(*a);
  double out = double(I.getOperand(0).value->getType()->size());
  // The integer products count their multiply-adds as the float ones do
  // (a RequantConv's requantizing store is not counted).
  if (auto *c = llvm::dyn_cast<ConvInst>(&I))
    return convFlops(out, c->getFilter());
  if (auto *c = llvm::dyn_cast<IntConvInst>(&I))
    return convFlops(out, c->getFilter());
  if (auto *c = llvm::dyn_cast<RequantConvInst>(&I))
    return convFlops(out, c->getFilter());
  if (auto *m = llvm::dyn_cast<MatMulInst>(&I))
    return matMulFlops(out, m->getLHS());
  if (auto *m = llvm::dyn_cast<IntMatMulInst>(&I))
    return matMulFlops(out, m->getLHS());
  if (auto *m = llvm::dyn_cast<RequantMatMulInst>(&I))
    return matMulFlops(out, m->getLHS());
  static const llvm::StringSet<> kMovement = {
      "copy",     "transpose",       "broadcast",
      "concat",   "slice",           "pad",
      "tile",     "gather",          "gatherelements",
      "gathernd", "scatterelements", "scatternd",
      "splat",    "tensorview",      "insertslice",
      "reshape",  "channelshuffle"};
  if (kMovement.contains(I.getKindName().lower()))
    return 0;
  double most = 0;
  for (const Operand &op : I.getOperands())
    most = std::max(most, double(op.value->getType()->size()));
  return most;
}

static std::string shapeOf(const Instruction &I) {
  if (I.getNumOperands() == 0)
    return "-";
  std::string s;
  for (dim_t d : I.getOperand(0).value->getType()->dims())
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s.empty() ? "scalar" : s;
}

/// The row of the instruction group of kernels [b, e) of \p p.
static ProfileRow groupRow(const Profile &p, size_t b, size_t e, double runs) {
  const KernelTime &k = p.kernels[b];
  ProfileRow r;
  r.kernels = unsigned(e - b);
  for (size_t i = b; i < e; ++i)
    r.ms += 1e3 * p.kernels[i].seconds / runs;
  if (k.sources.empty()) {
    r.name = k.name;
    r.kind = "-";
    r.shape = "-";
    return r;
  }
  r.name = k.sources.front()->getName().str();
  for (const Instruction *I : k.sources) {
    r.kind += (r.kind.empty() ? "" : "+") + I->getKindName().str();
    r.flops += countFlops(*I);
  }
  r.shape = shapeOf(*k.sources.back());
  return r;
}

/// One row per kernel of group \p g (kernels [b, e)), each named by its
/// kernel. The group's FLOPs go to the kernels that carry the
/// instruction's own name (its products, one per image); helpers such as
/// a convolution's packing kernel (NAME.pack) get none. A group whose
/// kernels all have other names shares them evenly.
static void appendKernelRows(std::vector<ProfileRow> &rows, const Profile &p,
                             const ProfileRow &g, size_t b, size_t e,
                             double runs) {
  size_t named = 0;
  for (size_t i = b; i < e; ++i)
    named += p.kernels[i].name == g.name;
  for (size_t i = b; i < e; ++i) {
    ProfileRow r = g;
    r.kernels = 1;
    r.name = p.kernels[i].name;
    r.ms = 1e3 * p.kernels[i].seconds / runs;
    bool product = named == 0 || r.name == g.name;
    r.flops = product ? g.flops / double(named ? named : e - b) : 0;
    rows.push_back(std::move(r));
  }
}

std::vector<ProfileRow> ember::summarizeProfile(const Profile &p,
                                                bool perKernel) {
  std::vector<ProfileRow> rows;
  double runs = std::max(1u, p.runs);
  for (size_t b = 0, e; b < p.kernels.size(); b = e) {
    const auto &sources = p.kernels[b].sources;
    for (e = b + 1; e < p.kernels.size() && !sources.empty() &&
                    p.kernels[e].sources == sources;
         ++e)
      ;
    ProfileRow g = groupRow(p, b, e, runs);
    if (perKernel)
      appendKernelRows(rows, p, g, b, e, runs);
    else
      rows.push_back(std::move(g));
  }
  return rows;
}

void ember::printProfile(const Profile &p, llvm::raw_ostream &os, bool byTime,
                         bool perKernel) {
  std::vector<ProfileRow> rows = summarizeProfile(p, perKernel);
  double total = 0, flops = 0;
  for (const ProfileRow &r : rows) {
    total += r.ms;
    flops += r.flops;
  }
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    order[i] = i;
  if (byTime)
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return rows[a].ms > rows[b].ms;
    });
  auto gflops = [](double f, double ms) {
    return ms > 0 ? f / (ms * 1e6) : 0.0;
  };
  os << llvm::format("profile: %u run(s), %zu kernels, %zu rows (%s)\n", p.runs,
                     p.kernels.size(), rows.size(),
                     byTime ? "slowest first" : "in execution order");
  os << llvm::format("%5s %10s %7s %9s  %-28s %-18s %s\n", (const char *)"#",
                     (const char *)"ms", (const char *)"%",
                     (const char *)"GFLOP/s", (const char *)"kind",
                     (const char *)"shape", (const char *)"name");
  for (size_t i : order) {
    const ProfileRow &r = rows[i];
    std::string kind =
        r.kind.size() > 28 ? r.kind.substr(0, 25) + "..." : r.kind;
    os << llvm::format("%5zu %10.4f %7.2f %9.2f  %-28s %-18s %s", i, r.ms,
                       total > 0 ? 100 * r.ms / total : 0.0,
                       gflops(r.flops, r.ms), kind.c_str(), r.shape.c_str(),
                       r.name.c_str());
    if (r.kernels > 1)
      os << " (" << r.kernels << " kernels)";
    os << "\n";
  }
  os << llvm::format("total %10.4f ms per run, %.3f GFLOP, %.2f GFLOP/s\n",
                     total, flops / 1e9, gflops(flops, total));
}
