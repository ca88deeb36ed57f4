//===- BundleWriter.h - What every backend's bundle shares -----*- C++ -*-===//
//
// The CPU and CUDA bundles follow one ABI (docs/Bundle.md): the same I/O
// naming and header macros, the same `NAME_info` metadata symbol and the
// same C types (include/ember/Bundle/EmberBundle.h). This is that shared
// part; each backend adds its code and its entry point.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BACKEND_BUNDLEWRITER_H
#define EMBER_BACKEND_BUNDLEWRITER_H

#include "ember/IR/MemoryPlanner.h"

#include "llvm/IR/Constant.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <optional>
#include <string>
#include <vector>

namespace ember {

/// One network input or output as a bundle describes it.
struct BundleTensorDesc {
  std::string name;  ///< The ONNX name.
  std::string ident; ///< A C identifier made from it (unique in the bundle).
  int32_t onnxKind;  ///< ONNX TensorProto.DataType code.
  std::vector<int64_t> dims;
  uint64_t offset, size;          ///< Bytes in the mutable region.
  std::optional<TypeQuant> quant; ///< Its scale and zero point, if known.
  /// For an output whose extent depends on the data: the axis, and the
  /// offset of its Int64 count in the mutable region (-1 and 0 otherwise).
  int64_t dynamicAxis = -1;
  uint64_t extentOffset = 0;
};

/// The region sizes a bundle reports.
struct BundleRegions {
  uint64_t constantSize, mutableSize, activationSize;
};

/// The text of include/ember/Bundle/EmberBundle.h, which every generated
/// header embeds so that it stands alone.
llvm::StringRef bundleTypesText();

/// True if \p s is a valid C identifier.
bool isCIdentifier(llvm::StringRef s);

/// The ONNX TensorProto.DataType code of \p kind (0 if it has none).
int32_t onnxElemKindCode(ElemKind kind);

/// Inputs then outputs of \p F with C identifiers made from their ONNX
/// names: non-alphanumerics become '_', a leading digit gets a 'v' prefix,
/// repeats (or the region names) get a suffix _2, _3, ...
void describeBundleIO(const IRFunction &F, const MemoryPlan &plan,
                      std::vector<BundleTensorDesc> &ins,
                      std::vector<BundleTensorDesc> &outs);

/// Prints NAME_NUM_CHECKS, NAME_CHECK_CODE_BASE and NAME_CHECK_MESSAGES (a
/// brace list of C strings: entry k - 1 is the message of return code
/// \p base + k) of \p M's run-time checks (docs/Bundle.md "Return codes");
/// nothing without checks. CPU entries return k (base 0); CUDA entries
/// return 30000 + k, clear of the CUDA and library status codes.
void printBundleCheckMacros(llvm::raw_ostream &os, llvm::StringRef name,
                            const Module *M, int base = 0);

/// Prints the per-tensor header macros (NAME_<IDENT>_OFFSET, _SIZE,
/// _ELEM_KIND, _RANK, _DIMS) of every input, then every output, and
/// _DYNAMIC_AXIS, _EXTENT_OFFSET of an output whose extent depends on the
/// data.
void printBundleIOMacros(llvm::raw_ostream &os, llvm::StringRef name,
                         const std::vector<BundleTensorDesc> &ins,
                         const std::vector<BundleTensorDesc> &outs);

/// Adds `const EmberBundleInfo NAME_info` (and what it points to) to \p M.
/// \p embeddedWeights is the embedded constant image, or null.
void addBundleInfo(llvm::Module &M, llvm::StringRef name,
                   const BundleRegions &regions,
                   const std::vector<BundleTensorDesc> &ins,
                   const std::vector<BundleTensorDesc> &outs,
                   llvm::Constant *embeddedWeights);

/// Writes \p data to \p path, or says which file could not be written.
llvm::Error writeBundleFile(llvm::StringRef path, llvm::StringRef data);

/// Runs \p TM's code generator over \p M (no IR optimization) and writes
/// an object file or assembly (\p type) to \p os.
llvm::Error emitCode(llvm::Module &M, llvm::TargetMachine &TM,
                     llvm::raw_pwrite_stream &os, llvm::CodeGenFileType type);

/// emitCode of an object file to \p path.
llvm::Error emitObjectFile(llvm::Module &M, llvm::TargetMachine &TM,
                           llvm::StringRef path);

} // namespace ember

#endif // EMBER_BACKEND_BUNDLEWRITER_H
