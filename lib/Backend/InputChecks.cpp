//===- InputChecks.cpp - Run-time checks of shape operands ----------------===//
//
// A network whose shape operands are graph inputs is compiled for the values
// the model's declared shapes imply (Module::getInputChecks). The wrapper
// here makes every in-process run check the bound values first, so that a
// value the network was not compiled for fails the call with an error
// instead of computing the compiled shape; and, after the run, that every
// run-time check in the compiled code passed (Module::getCheckStatus).
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

llvm::Error ember::checkRunStatus(const Module &M, const Bindings &b) {
  const Placeholder *p = M.getCheckStatus();
  if (!p)
    return llvm::Error::success();
  const Tensor *t = b.get(p);
  if (!t)
    return makeErrorF("output '{0}' is not bound (the network writes the "
                      "status of its run-time checks there)",
                      p->getName());
  int64_t code = t->getHandle<int64_t>().raw(0);
  if (code == 0)
    return llvm::Error::success();
  const std::vector<std::string> &msgs = M.getRuntimeChecks();
  if (code < 0 || code > int64_t(msgs.size()))
    return makeErrorF("run-time check failed: unknown check {0}", code);
  return makeError(msgs[code - 1]);
}

namespace {

/// Checks the input values, then runs the backend's function.
class CheckedFunction : public CompiledFunction {
public:
  CheckedFunction(const Module &M, std::unique_ptr<CompiledFunction> inner)
      : M_(M), inner_(std::move(inner)) {}
  llvm::Error run(Bindings &b) override {
    EMBER_RETURN_IF_ERR(checkInputValues(M_, b));
    bindStatus(b);
    EMBER_RETURN_IF_ERR(inner_->run(b));
    return checkRunStatus(M_, b);
  }
  llvm::Error runProfiled(Bindings &b, Profile &profile) override {
    EMBER_RETURN_IF_ERR(checkInputValues(M_, b));
    bindStatus(b);
    EMBER_RETURN_IF_ERR(inner_->runProfiled(b, profile));
    return checkRunStatus(M_, b);
  }
  llvm::Error setNumThreads(unsigned n) override {
    return inner_->setNumThreads(n);
  }

private:
  /// The status output must reach the bindings even when the caller binds
  /// only the model's outputs.
  void bindStatus(Bindings &b) {
    if (Placeholder *p = M_.getCheckStatus())
      if (!b.get(p))
        b.insert(p, Tensor(*p->getType()));
  }

  const Module &M_;
  std::unique_ptr<CompiledFunction> inner_;
};

} // namespace

std::unique_ptr<CompiledFunction>
ember::withInputChecks(const Module &M, std::unique_ptr<CompiledFunction> f) {
  if (M.getInputChecks().empty() && !M.getCheckStatus())
    return f;
  return std::make_unique<CheckedFunction>(M, std::move(f));
}
