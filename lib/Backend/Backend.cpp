//===- Backend.cpp - Bindings and the backend registry --------------------===//
#include "ember/Backend/Backend.h"

#include "ember/Base/Error.h"

#include <algorithm>
#include <cstring>

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

llvm::SmallVector<Placeholder *, 4> ember::modelOutputs(const Module &M) {
  llvm::SmallVector<Placeholder *, 4> r;
  for (Placeholder *p : M.getOutputPlaceholders())
    if (!M.isHiddenOutput(p))
      r.push_back(p);
  return r;
}

llvm::Expected<Tensor> ember::outputAtExtent(const Module &M, const Bindings &b,
                                             const Placeholder *p) {
  const Tensor *t = b.get(p);
  const DynamicExtent *d = M.dynamicExtentOf(p);
  if (!t)
    return makeErrorF("output '{0}' is not bound", p->getName());
  if (!d)
    return t->clone();
  const Tensor *c = b.get(d->count);
  auto dims = t->getType().dims();
  int64_t n = dims[d->axis];
  int64_t k = c ? c->getHandle<int64_t>().raw(0) : -1;
  if (k < 0 || k > n)
    return makeErrorF("output '{0}': the extent {1} is outside [0, {2}]",
                      p->getName(), k, n);
  llvm::SmallVector<dim_t, 6> cut(dims.begin(), dims.end());
  cut[d->axis] = k;
  Tensor r(Type(t->getElemKind(), cut));
  size_t outer = 1, inner = elemSize(t->getElemKind());
  for (unsigned i = 0; i < dims.size(); ++i)
    (i < d->axis ? outer : inner) *= i == d->axis ? 1 : dims[i];
  for (size_t o = 0; o < outer; ++o)
    std::memcpy(r.data() + o * k * inner, t->data() + o * n * inner, k * inner);
  return r;
}

std::vector<uint8_t> ember::makeConstantImage(const IRFunction &F,
                                              const MemoryPlan &plan) {
  std::vector<uint8_t> image;
  image.reserve(plan.constantSize);
  fillConstantImage(F, plan, image);
  return image;
}

void ember::fillConstantImage(const IRFunction &F, const MemoryPlan &plan,
                              std::vector<uint8_t> &image,
                              const WeightCopied &weightCopied) {
  std::vector<std::pair<uint64_t, const WeightVar *>> weights;
  for (auto &w : F.getWeights())
    if (w->isConstant())
      weights.push_back({plan.placements.lookup(w.get()).offset, w.get()});
  std::sort(weights.begin(), weights.end(),
            [](const auto &a, const auto &b) { return a.first < b.first; });
  for (auto [offset, w] : weights) {
    uint64_t bytes = w->getType()->sizeInBytes();
    image.resize(std::max<uint64_t>(image.size(), offset + bytes), 0);
    std::memcpy(image.data() + offset, w->getPayload()->data(), bytes);
    if (weightCopied)
      weightCopied(*w->getPayload());
  }
  image.resize(plan.constantSize, 0);
}

llvm::Error ember::copyInputsToRegion(const Module &M, const IRFunction &F,
                                      const MemoryPlan &plan, Bindings &b,
                                      uint8_t *mutables) {
  for (auto &w : F.getWeights()) {
    if (w->isConstant() || w->isOutput())
      continue;
    const Placeholder *p = M.getPlaceholderByName(w->getName());
    const Tensor *t = p ? b.get(p) : nullptr;
    if (!t)
      return makeErrorF("no tensor is bound to input '{0}'", w->getName());
    if (!t->getType().isSameStorage(*w->getType()))
      return makeErrorF("input '{0}' expects {1}, got {2}", w->getName(),
                        w->getType()->toString(), t->getType().toString());
    std::memcpy(mutables + plan.placements.lookup(w.get()).offset, t->data(),
                t->sizeInBytes());
  }
  return llvm::Error::success();
}

void ember::copyOutputsFromRegion(const Module &M, const IRFunction &F,
                                  const MemoryPlan &plan, Bindings &b,
                                  const uint8_t *mutables) {
  b.allocateOutputs(M);
  for (auto &w : F.getWeights()) {
    if (!w->isOutput())
      continue;
    Tensor *t = b.get(M.getPlaceholderByName(w->getName()));
    std::memcpy(t->data(), mutables + plan.placements.lookup(w.get()).offset,
                w->getType()->sizeInBytes());
  }
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

llvm::Error Backend::printConvPlans(const IRFunction &, const CodegenOptions &,
                                    llvm::raw_ostream &) const {
  return makeErrorF("-print-conv-plans: backend {0} does not choose among "
                    "convolution paths (the CPU backend does)",
                    getName());
}

llvm::Error CompiledFunction::setNumThreads(unsigned n) {
  if (n <= 1)
    return llvm::Error::success();
  return makeError("this backend runs on one thread (the CPU backend can use "
                   "more)");
}

llvm::Error CompiledFunction::runProfiled(Bindings &, Profile &) {
  return makeError("this backend cannot time its kernels (the CPU backend "
                   "can)");
}
