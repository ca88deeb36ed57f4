//===- IROptimizer.cpp - The IR pass registry and pipeline ----------------===//
#include "ember/IR/IROptimizer.h"

#include "ember/IR/IRGen.h"

using namespace ember;

static const IRPass kPasses[] = {
    {"dead-ir", eliminateDeadIR},
    {"concat-in-place", concatInPlace},
    {"copy-into-outputs", copyIntoOutputs},
    {"propagate-copies", propagateCopies},
    {"reuse-in-place", reuseInPlace},
    {"shrink-live-ranges", shrinkLiveRanges},
};

/// Passes run only where a backend asks for them (and by name).
static const IRPass kOptInPasses[] = {
    {"reuse-conv-residual", reuseConvResidual},
};

llvm::ArrayRef<IRPass> ember::getIRPasses() { return kPasses; }

const IRPass *ember::lookupIRPass(llvm::StringRef name) {
  for (llvm::ArrayRef<IRPass> list :
       {llvm::ArrayRef<IRPass>(kPasses), llvm::ArrayRef<IRPass>(kOptInPasses)})
    for (const IRPass &p : list)
      if (name == p.name)
        return &p;
  return nullptr;
}

llvm::Error ember::runIRPasses(IRFunction &F,
                               llvm::ArrayRef<std::string> passes,
                               bool verifyEach) {
  for (const std::string &name : passes) {
    const IRPass *p = lookupIRPass(name);
    if (!p)
      return makeErrorF("unknown IR pass '{0}'", name);
    p->run(F);
    if (!verifyEach)
      continue;
    if (llvm::Error err = verifyIR(F))
      return makeErrorF("internal error: IR pass {0} broke the IR: {1}", name,
                        errorToString(std::move(err)));
  }
  return llvm::Error::success();
}

llvm::Error ember::optimizeIR(IRFunction &F, bool verifyEach) {
  std::vector<std::string> names;
  for (const IRPass &p : kPasses)
    names.push_back(p.name);
  return runIRPasses(F, names, verifyEach);
}
