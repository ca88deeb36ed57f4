//===- Backend.cpp - Bindings and the backend registry --------------------===//
#include "ember/Backend/Backend.h"

#include "ember/Base/Error.h"

using namespace ember;

void Bindings::insert(const Placeholder *p, Tensor t) {
  for (auto &e : entries_)
    if (e.first == p) {
      e.second = std::move(t);
      return;
    }
  entries_.emplace_back(p, std::move(t));
}

Tensor *Bindings::get(const Placeholder *p) {
  for (auto &e : entries_)
    if (e.first == p)
      return &e.second;
  return nullptr;
}

const Tensor *Bindings::get(const Placeholder *p) const {
  return const_cast<Bindings *>(this)->get(p);
}

void Bindings::allocateOutputs(const Module &M) {
  for (Placeholder *p : M.getOutputPlaceholders())
    if (!get(p))
      insert(p, Tensor(*p->getType()));
}

static std::vector<std::unique_ptr<Backend>> &registry() {
  static std::vector<std::unique_ptr<Backend>> backends;
  return backends;
}

void ember::registerBackend(std::unique_ptr<Backend> B) {
  for (auto &b : registry())
    if (b->getName() == B->getName())
      return;
  registry().push_back(std::move(B));
}

llvm::Expected<const Backend *> ember::getBackend(llvm::StringRef name) {
  for (auto &b : registry())
    if (b->getName().equals_insensitive(name))
      return b.get();
  std::string known;
  for (auto &b : registry())
    known += (known.empty() ? "" : ", ") + b->getName().str();
  return makeErrorF("unknown backend '{0}' (available: {1})", name, known);
}

std::vector<std::string> ember::getBackendNames() {
  std::vector<std::string> names;
  for (auto &b : registry())
    names.push_back(b->getName().str());
  return names;
}

llvm::Error Backend::saveBundle(const Module &, const IRFunction &,
                                const MemoryPlan &,
                                const BundleOptions &) const {
  return makeErrorF("backend {0} cannot emit bundles", getName());
}

llvm::Error CompiledFunction::runProfiled(Bindings &, Profile &) {
  return makeError("this backend cannot time its kernels (the CPU backend "
                   "can)");
}
