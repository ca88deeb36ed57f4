//===- BundleWriter.cpp - What every backend's bundle shares --------------===//
#include "ember/Backend/BundleWriter.h"

#include "ember/Base/Error.h"
#include "ember/Bundle/EmberBundle.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <cstdio>

using namespace ember;

llvm::StringRef ember::bundleTypesText() {
  // Generated at configure time from include/ember/Bundle/EmberBundle.h.
  static const char kText[] =
#include "ember/Generated/EmberBundleText.inc"
      ;
  return kText;
}

bool ember::isCIdentifier(llvm::StringRef s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])))
    return false;
  return llvm::all_of(s, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

int32_t ember::onnxElemKindCode(ElemKind k) {
  switch (k) {
  case ElemKind::Float32:
    return 1;
  case ElemKind::UInt8:
  case ElemKind::UInt8Q:
    return 2;
  case ElemKind::Int8:
  case ElemKind::Int8Q:
    return 3;
  case ElemKind::Int32:
    return 6;
  case ElemKind::Int64:
    return 7;
  case ElemKind::Bool:
    return 9;
  case ElemKind::Float16:
    return 10;
  case ElemKind::BFloat16:
    return 16;
  default:
    return 0;
  }
}

void ember::describeBundleIO(const IRFunction &F, const MemoryPlan &plan,
                             std::vector<BundleTensorDesc> &ins,
                             std::vector<BundleTensorDesc> &outs) {
  llvm::StringSet<> used = {"CONSTANT", "MUTABLE", "ACTIVATIONS", "BUNDLE_ABI"};
  for (auto &w : F.getWeights()) {
    if (w->isConstant())
      continue;
    BundleTensorDesc d;
    d.name = w->getName().str();
    for (char c : d.name)
      d.ident += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (d.ident.empty() || std::isdigit(static_cast<unsigned char>(d.ident[0])))
      d.ident = "v" + d.ident;
    std::string base = d.ident;
    for (unsigned n = 2; used.count(d.ident); ++n)
      d.ident = base + "_" + std::to_string(n);
    used.insert(d.ident);
    d.onnxKind = onnxElemKindCode(w->getType()->getElemKind());
    d.dims.assign(w->getType()->dims().begin(), w->getType()->dims().end());
    d.offset = plan.placements.lookup(w.get()).offset;
    d.size = w->getType()->sizeInBytes();
    if (const TypeQuant *q = w->getType()->getQuant())
      d.quant = *q;
    (w->isOutput() ? outs : ins).push_back(std::move(d));
  }
  if (!F.getModule())
    return;
  auto byName = [&](llvm::StringRef n) -> BundleTensorDesc * {
    for (BundleTensorDesc &d : outs)
      if (d.name == n)
        return &d;
    return nullptr;
  };
  for (const DynamicExtent &e : F.getModule()->getDynamicExtents()) {
    BundleTensorDesc *out = byName(e.output->getName());
    BundleTensorDesc *count = byName(e.count->getName());
    if (out && count) {
      out->dynamicAxis = e.axis;
      out->extentOffset = count->offset;
    }
  }
}

/// A float as a C literal that reads back as the same float.
static std::string cFloat(float f) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9gf", f);
  // "1f" is not a C literal: give integral values a decimal point.
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos)
    s.insert(s.size() - 1, ".0");
  return s;
}

/// The scale and zero point macros of a quantized tensor \p p (a prefix):
/// per tensor SCALE and ZERO_POINT, per axis QUANT_AXIS and brace lists
/// SCALES and ZERO_POINTS.
static void printQuantMacros(llvm::raw_ostream &os, const std::string &p,
                             const TypeQuant &q) {
  if (q.isPerTensor()) {
    os << "#define " << p << "_SCALE " << cFloat(q.scales[0]) << "\n";
    os << "#define " << p << "_ZERO_POINT " << q.zeros[0] << "\n";
    return;
  }
  os << "#define " << p << "_QUANT_AXIS " << q.axis << "\n";
  os << "#define " << p << "_SCALES {";
  for (size_t i = 0; i < q.scales.size(); ++i)
    os << (i ? ", " : "") << cFloat(q.scales[i]);
  os << "}\n#define " << p << "_ZERO_POINTS {";
  for (size_t i = 0; i < q.zeros.size(); ++i)
    os << (i ? ", " : "") << q.zeros[i];
  os << "}\n";
}

void ember::printBundleIOMacros(llvm::raw_ostream &os, llvm::StringRef name,
                                const std::vector<BundleTensorDesc> &ins,
                                const std::vector<BundleTensorDesc> &outs) {
  auto emit = [&](const BundleTensorDesc &d, const char *what) {
    std::string p = (name + "_" + d.ident).str();
    os << "\n/* " << what << " '" << d.name << "' */\n";
    os << "#define " << p << "_OFFSET " << d.offset << "u\n";
    os << "#define " << p << "_SIZE " << d.size << "u\n";
    os << "#define " << p << "_ELEM_KIND " << d.onnxKind << "\n";
    os << "#define " << p << "_RANK " << d.dims.size() << "\n";
    os << "#define " << p << "_DIMS {";
    for (size_t i = 0; i < d.dims.size(); ++i)
      os << (i ? ", " : "") << d.dims[i];
    os << "}\n";
    if (d.quant)
      printQuantMacros(os, p, *d.quant);
    if (d.dynamicAxis < 0)
      return;
    os << "/* its extent on this axis depends on the data: the int64 at "
          "this offset\n   holds it (the entries past it are zeros) */\n";
    os << "#define " << p << "_DYNAMIC_AXIS " << d.dynamicAxis << "\n";
    os << "#define " << p << "_EXTENT_OFFSET " << d.extentOffset << "u\n";
  };
  for (auto &d : ins)
    emit(d, "input");
  for (auto &d : outs)
    emit(d, "output");
}

void ember::printBundleCheckMacros(llvm::raw_ostream &os, llvm::StringRef name,
                                   const Module *M, int base) {
  if (!M || !M->getCheckStatus())
    return;
  const std::vector<std::string> &msgs = M->getRuntimeChecks();
  os << "\n/* Run-time checks: the entries return " << name
     << "_CHECK_CODE_BASE + k (k > 0)\n   when check k failed (docs/Bundle.md "
        "\"Return codes\"); its message is entry k - 1. */\n#define "
     << name << "_NUM_CHECKS " << msgs.size() << "\n#define " << name
     << "_CHECK_CODE_BASE " << base << "\n#define " << name
     << "_CHECK_MESSAGES {";
  for (size_t i = 0; i < msgs.size(); ++i) {
    os << (i ? ", \\\n  \"" : " \\\n  \"");
    os.write_escaped(msgs[i]);
    os << "\"";
  }
  os << "}\n";
}

void ember::addBundleInfo(llvm::Module &M, llvm::StringRef name,
                          const BundleRegions &regions,
                          const std::vector<BundleTensorDesc> &ins,
                          const std::vector<BundleTensorDesc> &outs,
                          llvm::Constant *embeddedWeights) {
  llvm::LLVMContext &ctx = M.getContext();
  llvm::Type *ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type *i32 = llvm::Type::getInt32Ty(ctx),
             *i64 = llvm::Type::getInt64Ty(ctx);
  auto *tensorTy = llvm::StructType::get(ctx, {ptr, i32, i32, ptr, i64, i64});
  auto *infoTy = llvm::StructType::get(
      ctx, {i32, ptr, i64, i64, i64, i64, i32, i32, ptr, ptr, ptr});
  auto *null = llvm::ConstantPointerNull::get(llvm::PointerType::get(ctx, 0));
  auto global = [&](llvm::Constant *init, const llvm::Twine &n) {
    return new llvm::GlobalVariable(M, init->getType(), true,
                                    llvm::GlobalValue::PrivateLinkage, init, n);
  };
  auto str = [&](llvm::StringRef s) {
    return global(llvm::ConstantDataArray::getString(ctx, s), name + ".str");
  };
  auto i32c = [&](uint64_t v) { return llvm::ConstantInt::get(i32, v); };
  auto i64c = [&](uint64_t v) { return llvm::ConstantInt::get(i64, v); };
  auto table =
      [&](const std::vector<BundleTensorDesc> &ds) -> llvm::Constant * {
    if (ds.empty())
      return null;
    std::vector<llvm::Constant *> elems;
    for (const BundleTensorDesc &d : ds) {
      auto *dims = global(
          llvm::ConstantDataArray::get(ctx, llvm::ArrayRef<int64_t>(d.dims)),
          name + ".dims");
      elems.push_back(llvm::ConstantStruct::get(
          tensorTy, {str(d.name), i32c(d.onnxKind), i32c(d.dims.size()), dims,
                     i64c(d.offset), i64c(d.size)}));
    }
    return global(llvm::ConstantArray::get(
                      llvm::ArrayType::get(tensorTy, elems.size()), elems),
                  name + ".tensors");
  };
  auto *info = llvm::ConstantStruct::get(
      infoTy,
      {i32c(EMBER_BUNDLE_ABI_VERSION), str(name), i64c(regions.constantSize),
       i64c(regions.mutableSize), i64c(regions.activationSize), i64c(64),
       i32c(ins.size()), i32c(outs.size()), table(ins), table(outs),
       embeddedWeights ? embeddedWeights : null});
  new llvm::GlobalVariable(M, infoTy, true, llvm::GlobalValue::ExternalLinkage,
                           info, name + "_info");
}

llvm::Error ember::writeBundleFile(llvm::StringRef path, llvm::StringRef data) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return makeErrorF("cannot write '{0}': {1}", path, ec.message());
  os << data;
  return llvm::Error::success();
}

llvm::Error ember::emitCode(llvm::Module &M, llvm::TargetMachine &TM,
                            llvm::raw_pwrite_stream &os,
                            llvm::CodeGenFileType type) {
  llvm::legacy::PassManager pm;
  if (TM.addPassesToEmitFile(pm, os, nullptr, type))
    return makeError("the target cannot emit this file type");
  pm.run(M);
  return llvm::Error::success();
}

llvm::Error ember::emitObjectFile(llvm::Module &M, llvm::TargetMachine &TM,
                                  llvm::StringRef path) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return makeErrorF("cannot write '{0}': {1}", path, ec.message());
  return emitCode(M, TM, os, llvm::CodeGenFileType::ObjectFile);
}
