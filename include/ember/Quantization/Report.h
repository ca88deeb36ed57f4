//===- Report.h - Per-layer quantization noise ------------------*- C++ -*-===//
//
// -dump-quantization-report: the float network and the quantized one run
// on the same inputs; for each quantized layer the report gives the
// signal-to-quantization-noise ratio of its output,
//   SQNR = 10 log10(sum f^2 / sum (f - q)^2)  dB,
// summed over every element of every input, f the float network's value
// and q the quantized network's (dequantized) value. The noise is the
// network's up to that layer, so the layer that loses most is the one
// whose SQNR drops most from the layer before.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_QUANTIZATION_REPORT_H
#define EMBER_QUANTIZATION_REPORT_H

#include "ember/Quantization/Quantize.h"

#include "llvm/Support/raw_ostream.h"

namespace ember {

/// Saves each quantized layer's output in both networks and sums the
/// signal and noise over runs.
class QuantizationReport {
public:
  /// Adds Saves to \p floatF (the values \p floatNames gives the layers'
  /// ONNX names) and to \p quantF (each layer's Dequantize).
  QuantizationReport(Function &floatF, const ValueNames &floatNames,
                     Function &quantF,
                     const std::vector<QuantizedLayer> &layers);
  /// Adds one run of both networks.
  void record(const Bindings &floatRun, const Bindings &quantRun);
  /// One line per layer: kind, ONNX output name, SQNR in dB.
  void print(llvm::raw_ostream &os) const;

private:
  struct Row {
    std::string kind, output;
    const Placeholder *f = nullptr, *q = nullptr;
    double signal = 0, noise = 0;
  };
  std::vector<Row> rows_;
  unsigned runs_ = 0;
};

} // namespace ember

#endif // EMBER_QUANTIZATION_REPORT_H
