//===- LibCall.cpp - Library calls checked against their declarations -----===//
#include "ember/Kernel/LibCall.h"

#include "glog/logging.h"

using namespace ember;
using namespace ember::kir;

/// True when a buffer of \p got may stand behind an integer pointer of
/// \p want: integer kernels read signed and unsigned (and quantized)
/// elements of one size through one pointer type and fix the sign up
/// themselves (e.g. Int8 activations read as UInt8 and flipped).
static bool sameBytes(ElemKind got, ElemKind want) {
  return isIntegerKind(want) && (isIntegerKind(got) || isQuantizedKind(got)) &&
         elemSize(got) == elemSize(want);
}

Stmt kir::checkedLibCall(const Kernel &k, const LibKernel &lib,
                         std::vector<CallArg> args) {
  std::string callee = lib.name;
  llvm::ArrayRef<LibParam> params = lib.params;
  CHECK_EQ(args.size(), params.size())
      << "kernel " << k.getName().str() << " calls " << callee
      << " with the wrong number of arguments";
  for (size_t i = 0; i < args.size(); ++i) {
    const CallArg &a = args[i];
    const LibParam &p = params[i];
    // A constant 0 stands for a null pointer (no bias, no residual).
    if (p.pointer && !a.isBuffer && a.value->kind == ExprKind::Const &&
        a.value->type == ElemKind::Int64 && a.value->ival == 0)
      continue;
    CHECK_EQ(a.isBuffer, p.pointer)
        << callee << " argument " << i << " of kernel " << k.getName().str()
        << ": a " << (p.pointer ? "buffer" : "scalar") << " is expected";
    ElemKind got = a.isBuffer ? k.getBuffers()[a.buffer].kind : a.value->type;
    CHECK(got == p.elem || (a.isBuffer && sameBytes(got, p.elem)))
        << callee << " argument " << i << " of kernel " << k.getName().str()
        << ": " << elemKindName(got).str() << ", expected "
        << elemKindName(p.elem).str();
    if (a.isBuffer && a.value)
      CHECK(a.value->type == ElemKind::Int64)
          << callee << " argument " << i << ": offset not an index";
  }
  return Kernel::call(callee, std::move(args));
}
