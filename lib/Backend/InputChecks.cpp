//===- InputChecks.cpp - Run-time checks of shape operands ----------------===//
//
// A network whose shape operands are graph inputs is compiled for the values
// the model's declared shapes imply (Module::getInputChecks). The wrapper
// here makes every in-process run check the bound values first, so that a
// value the network was not compiled for fails the call with an error
// instead of computing the compiled shape.
//
//===----------------------------------------------------------------------===//
#include "ember/Backend/Pipeline.h"

using namespace ember;

llvm::Error ember::checkInputValues(const Module &M, const Bindings &b) {
  for (const InputCheck &c : M.getInputChecks()) {
    std::vector<const Tensor *> values;
    for (const Placeholder *p : c.inputs) {
      const Tensor *t = b.get(p);
      if (!t)
        return makeErrorF("input '{0}' is not bound (the network checks its "
                          "value at run time)",
                          p->getName());
      if (!t->getType().isSameStorage(*p->getType()))
        return makeErrorF("input '{0}' is {1}, expected {2}", p->getName(),
                          t->getType().toString(), p->getType()->toString());
      values.push_back(t);
    }
    EMBER_RETURN_IF_ERR(c.check(values));
  }
  return llvm::Error::success();
}

namespace {

/// Checks the input values, then runs the backend's function.
class CheckedFunction : public CompiledFunction {
public:
  CheckedFunction(const Module &M, std::unique_ptr<CompiledFunction> inner)
      : M_(M), inner_(std::move(inner)) {}
  llvm::Error run(Bindings &b) override {
    EMBER_RETURN_IF_ERR(checkInputValues(M_, b));
    return inner_->run(b);
  }
  llvm::Error runProfiled(Bindings &b, Profile &profile) override {
    EMBER_RETURN_IF_ERR(checkInputValues(M_, b));
    return inner_->runProfiled(b, profile);
  }
  llvm::Error setNumThreads(unsigned n) override {
    return inner_->setNumThreads(n);
  }

private:
  const Module &M_;
  std::unique_ptr<CompiledFunction> inner_;
};

} // namespace

std::unique_ptr<CompiledFunction>
ember::withInputChecks(const Module &M, std::unique_ptr<CompiledFunction> f) {
  if (M.getInputChecks().empty())
    return f;
  return std::make_unique<CheckedFunction>(M, std::move(f));
}
