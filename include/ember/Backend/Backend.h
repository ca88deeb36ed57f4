//===- Backend.h - The backend interface and registry ----------*- C++ -*-===//
#ifndef EMBER_BACKEND_BACKEND_H
#define EMBER_BACKEND_BACKEND_H

#include "ember/Backend/CodegenOptions.h"
#include "ember/IR/MemoryPlanner.h"

#include "llvm/Support/raw_ostream.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ember {

struct Profile;

/// Tensors bound to the placeholders of a Module for one run.
class Bindings {
public:
  /// Binds \p p to \p t (replacing any previous binding).
  void insert(const Placeholder *p, Tensor t);
  /// The tensor bound to \p p, or null.
  Tensor *get(const Placeholder *p);
  const Tensor *get(const Placeholder *p) const;
  /// Allocates zeroed tensors for every output placeholder of \p M that is
  /// not bound yet.
  void allocateOutputs(const Module &M);

private:
  std::vector<std::pair<const Placeholder *, Tensor>> entries_;
};

/// The ONNX outputs of \p M (without the hidden extent counts), in order.
llvm::SmallVector<Placeholder *, 4> modelOutputs(const Module &M);

/// Output \p p as bound in \p b, cut to its actual extent when that
/// depends on the data (Module::dynamicExtentOf; the entries past it are
/// zeros). An error when the count is out of range.
llvm::Expected<Tensor> outputAtExtent(const Module &M, const Bindings &b,
                                      const Placeholder *p);

/// The constant region's image: every constant weight of \p F at its planned
/// offset, zeros between (plan.constantSize bytes). Shared by the backends
/// that own a constant region.
std::vector<uint8_t> makeConstantImage(const IRFunction &F,
                                       const MemoryPlan &plan);

/// See BundleOptions::weightCopied.
using WeightCopied = std::function<void(const Tensor &payload)>;

/// Fills \p image (empty; capacity reserved by the caller as it likes) with
/// the constant region: the constant weights of \p F in the order of their
/// planned offsets, the image growing as they go, zeros between, to
/// plan.constantSize bytes. Each payload goes to \p weightCopied once
/// written, so a caller that frees it there holds each weight about once
/// (zero-filling the whole region first would make it resident at once).
void fillConstantImage(const IRFunction &F, const MemoryPlan &plan,
                       std::vector<uint8_t> &image,
                       const WeightCopied &weightCopied = {});

/// Copies the input tensors bound in \p b into the mutable-weights region
/// \p mutables, each at its planned offset; an error names an input that is
/// not bound or has the wrong type. Shared by every in-process backend.
llvm::Error copyInputsToRegion(const Module &M, const IRFunction &F,
                               const MemoryPlan &plan, Bindings &b,
                               uint8_t *mutables);
/// Allocates the output tensors in \p b and fills them from \p mutables.
void copyOutputsFromRegion(const Module &M, const IRFunction &F,
                           const MemoryPlan &plan, Bindings &b,
                           const uint8_t *mutables);

/// A network compiled by a backend, runnable in this process.
class CompiledFunction {
public:
  virtual ~CompiledFunction() = default;
  /// Runs once: reads the input tensors bound in \p b (by the placeholders
  /// of the IR's mutable weights) and writes the output tensors.
  virtual llvm::Error run(Bindings &b) = 0;
  /// Runs once like run() and adds each kernel's time to \p profile (see
  /// Profile.h); backends that cannot time their kernels return an error.
  virtual llvm::Error runProfiled(Bindings &b, Profile &profile);
  /// Runs later calls on \p n threads (the CPU backend's threaded
  /// schedule); backends that run on one thread return an error for n > 1.
  virtual llvm::Error setNumThreads(unsigned n);
};

/// What saveBundle writes and how (see docs/Bundle.md).
struct BundleOptions {
  std::string outputDir;     ///< Directory for NAME.o, NAME.h, ...
  std::string networkName;   ///< A C identifier: the entry point's name.
  bool embedWeights = false; ///< Constants in the object's read-only data.
  bool sharedObject = false; ///< Also link NAME.so.
  llvm::raw_ostream *dumpLLVMIR = nullptr;  ///< Optimized module, as text.
  llvm::raw_ostream *dumpLLVMAsm = nullptr; ///< Target assembly.
  bool verbose = false; ///< Report per-op code generation choices.
  llvm::raw_ostream *dumpSource = nullptr; ///< CUDA bundles: the CUDA C.
  CodegenOptions codegen; ///< Target and code generation choices.
  /// Called with each constant payload of the Module (a Constant's
  /// getPayload()) once the backend has copied it into its own image and
  /// will not read it again: a caller that only writes the bundle frees it
  /// there, so the weights are not held twice while the backend packs
  /// them. A backend may not call it (CUDA does not).
  WeightCopied weightCopied;
};

/// A code generator and executor. Backends declare what they keep and what
/// they need lowered; everything else is shared.
class Backend {
public:
  virtual ~Backend() = default;
  virtual llvm::StringRef getName() const = 0;
  /// True if the backend can execute \p n after lowering.
  virtual bool isOpSupported(const Node &n) const = 0;
  /// True if lowering should replace \p n (when a rule exists).
  virtual bool shouldLower(const Node &n) const = 0;
  /// True if the backend's Conv applies \p act in its epilogue (the
  /// fuse-conv-activation pass asks).
  virtual bool supportsFusedActivation(FusedActivation /*act*/) const {
    return false;
  }
  /// True if the backend's MatMul applies an epilogue (bias, residual and
  /// the activations supportsFusedActivation names) before it stores (the
  /// fuse-matmul-epilogue pass asks).
  virtual bool supportsMatMulEpilogue() const { return false; }
  /// True if the backend's Conv adds its Residual operand (the
  /// fuse-conv-residual pass asks).
  virtual bool supportsConvResidual() const { return false; }
  /// True if the backend's Conv may write its output over its residual
  /// (every epilogue reads residual element i before it writes output
  /// element i): the reuse-conv-residual IR pass then runs for it.
  virtual bool convResidualInPlace() const { return false; }
  /// True if the backend's Conv takes a filter computed at run time at
  /// little extra cost (the fold-scale-into-conv pass asks).
  virtual bool supportsRuntimeConvFilter() const { return false; }
  /// Whether the backend runs BFloat16 MatMuls (-precision=bf16).
  virtual bool supportsBF16MatMul() const { return false; }
  /// Whether the backend runs -precision=fp16 and -weights-precision: Casts
  /// between Float32 and Float16 / BFloat16 around Float32 MatMuls and
  /// Convs, whose weights are then 16-bit constants widened at run time.
  virtual bool supportsNarrowWeights() const { return false; }
  /// The activation layout the backend's convolution prefers (the
  /// conv-layout pass asks). NCHW keeps Conv as imported.
  virtual ConvLayout getPreferredConvLayout() const { return ConvLayout::NCHW; }
  /// Whether QDQ models should run their Conv/MatMul/Gemm as integer
  /// products (fold-qdq) by default: true only where the backend's integer
  /// kernels are at least as fast as its float ones on dequantized
  /// operands. No backend has such kernels yet (the integer products are
  /// portable loop nests), so all keep the float path unless asked.
  virtual bool prefersIntegerProducts() const { return false; }
  /// Whether the QDQ product \p product (a Conv, MatMul or Gemm that
  /// fold-qdq can fold) should run as an integer product when compiled
  /// with \p opts: the per-node form of prefersIntegerProducts, for a
  /// backend whose integer kernels win on some targets or shapes only.
  virtual bool prefersIntegerProduct(const Node & /*product*/,
                                     const CodegenOptions & /*opts*/) const {
    return prefersIntegerProducts();
  }
  /// Compiles planned IR for this process's machine with the choices in
  /// \p opts. \p M owns the placeholders the IR refers to.
  /// Prints, one line per convolution of \p F, the path the backend runs
  /// it along and why (-print-conv-plans). Backends that do not choose
  /// among convolution paths themselves say so in the error.
  virtual llvm::Error printConvPlans(const IRFunction &F,
                                     const CodegenOptions &opts,
                                     llvm::raw_ostream &os) const;
  virtual llvm::Expected<std::unique_ptr<CompiledFunction>>
  compile(const Module &M, std::shared_ptr<const IRFunction> F,
          const MemoryPlan &plan, const CodegenOptions &opts) const = 0;
  /// Writes an ahead-of-time bundle of planned IR; backends without one
  /// return an error.
  virtual llvm::Error saveBundle(const Module &M, const IRFunction &F,
                                 const MemoryPlan &plan,
                                 const BundleOptions &opts) const;
};

/// Adds \p B to the registry (called by registerAllBackends).
void registerBackend(std::unique_ptr<Backend> B);
/// Registers every backend built into this binary; idempotent.
void registerAllBackends();
/// The backend called \p name, or an error listing the known ones.
llvm::Expected<const Backend *> getBackend(llvm::StringRef name);
/// Names of the registered backends.
std::vector<std::string> getBackendNames();

} // namespace ember

#endif // EMBER_BACKEND_BACKEND_H
