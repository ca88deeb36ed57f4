//===- Profiler.cpp - Save every named float value ------------------------===//
#include "ember/Quantization/Profiler.h"

using namespace ember;

ProfileRecorder::ProfileRecorder(Function &F, const ValueNames &names) {
  Module &M = F.getParent();
  std::map<NodeValue, const Placeholder *> saved;
  for (const auto &[name, v] : names) {
    if (!v.getNode() || v.getElemKind() != ElemKind::Float32 ||
        llvm::isa<Constant>(v.getNode()))
      continue;
    auto it = saved.find(v);
    if (it == saved.end()) {
      const Placeholder *p = llvm::dyn_cast<Placeholder>(v.getNode());
      if (!p) {
        Placeholder *out =
            M.createPlaceholder("profile." + name, *v.getType(), true);
        F.createSave("profile.save." + name, v, out);
        p = out;
      }
      it = saved.emplace(v, p).first;
    }
    values_.push_back({name, it->second});
  }
}

void ProfileRecorder::record(const Bindings &b, QuantProfile &p) const {
  for (const auto &[name, ph] : values_) {
    const Tensor *t = b.get(ph);
    if (!t)
      continue;
    p.values[name].add(reinterpret_cast<const float *>(t->data()), t->size());
  }
  ++p.inputs;
}
