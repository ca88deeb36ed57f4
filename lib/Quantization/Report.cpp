//===- Report.cpp - Per-layer quantization noise --------------------------===//
#include "ember/Quantization/Report.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace ember;

/// A new output placeholder that \p v is saved to.
static const Placeholder *saveValue(Function &F, NodeValue v,
                                    const std::string &name) {
  Placeholder *p =
      F.getParent().createPlaceholder("report." + name, *v.getType(), true);
  F.createSave("report.save." + name, v, p);
  return p;
}

QuantizationReport::QuantizationReport(
    Function &floatF, const ValueNames &floatNames, Function &quantF,
    const std::vector<QuantizedLayer> &layers) {
  for (const QuantizedLayer &l : layers) {
    auto it = floatNames.find(l.output);
    if (it == floatNames.end())
      continue;
    rows_.push_back({l.kind, l.output, saveValue(floatF, it->second, l.output),
                     saveValue(quantF, l.value, l.output)});
  }
}

void QuantizationReport::record(const Bindings &floatRun,
                                const Bindings &quantRun) {
  for (Row &r : rows_) {
    const Tensor *f = floatRun.get(r.f), *q = quantRun.get(r.q);
    const auto *fv = reinterpret_cast<const float *>(f->data());
    const auto *qv = reinterpret_cast<const float *>(q->data());
    for (dim_t i = 0, e = f->size(); i < e; ++i) {
      r.signal += double(fv[i]) * fv[i];
      r.noise += (double(fv[i]) - qv[i]) * (double(fv[i]) - qv[i]);
    }
  }
  ++runs_;
}

void QuantizationReport::print(llvm::raw_ostream &os) const {
  os << "quantization report: SQNR of each quantized layer's output over "
     << runs_ << " input(s)\n";
  for (const Row &r : rows_) {
    std::string db =
        r.noise == 0
            ? "inf"
            : llvm::formatv("{0:f1}", 10 * std::log10(r.signal / r.noise))
                  .str();
    os << llvm::format("  %-7s %9s dB  ", r.kind.c_str(), db.c_str())
       << r.output << "\n";
  }
}
