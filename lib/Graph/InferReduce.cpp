//===- InferReduce.cpp - Result types of reductions -----------------------===//
#include "Infer.h"

#include "ember/Base/Error.h"

using namespace ember;

InferResult ember::inferReduce(llvm::ArrayRef<TypeRef> in,
                               const AttrList &attrs) {
  const Type &x = *in[0];
  llvm::ArrayRef<int64_t> axes = attrs[0].ints;
  bool keep = attrs[1].i != 0;
  if (axes.empty())
    return makeError("a reduction needs at least one axis");
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] < 0 || axes[i] >= int64_t(x.rank()) ||
        (i && axes[i] <= axes[i - 1]))
      return makeErrorF("axes {0} must be increasing and within the rank of "
                        "{1}",
                        dimsToString(axes), x.toString());
  llvm::SmallVector<dim_t, kMaxRank> dims;
  for (unsigned d = 0; d < x.rank(); ++d) {
    bool reduced = llvm::is_contained(axes, int64_t(d));
    if (!reduced)
      dims.push_back(x.dims()[d]);
    else if (keep)
      dims.push_back(1);
  }
  return llvm::SmallVector<Type, 1>{x.withDims(dims)};
}
