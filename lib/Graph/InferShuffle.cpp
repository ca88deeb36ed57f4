//===- InferShuffle.cpp - Result types of ChannelShuffle and ConvNHWC -----===//
#include "Infer.h"

#include "ember/Base/Error.h"

using namespace ember;

InferResult ember::inferChannelShuffle(llvm::ArrayRef<TypeRef> in,
                                       const AttrList &attrs) {
  int64_t group = attrs[0].i;
  dim_t channels = in[0]->dims()[1];
  if (group <= 0 || channels % group != 0)
    return makeErrorF("Group {0} must be positive and divide the {1} channels",
                      group, channels);
  return llvm::SmallVector<Type, 1>{*in[0]};
}

/// NHWC dims from NCHW ones and back (rank 4).
static Type permuted(const Type &t, const unsigned (&perm)[4]) {
  llvm::SmallVector<dim_t, 4> d;
  for (unsigned p : perm)
    d.push_back(t.dims()[p]);
  return t.withDims(d);
}

/// ConvNHWC is Conv with the input, filter and result in channels-last
/// order: check and infer through inferConv on the NCHW views.
InferResult ember::inferConvNHWC(llvm::ArrayRef<TypeRef> in,
                                 const AttrList &attrs) {
  static const unsigned toNCHW[4] = {0, 3, 1, 2}, toNHWC[4] = {0, 2, 3, 1};
  llvm::SmallVector<Type, 4> views;
  for (size_t i = 0; i < in.size(); ++i)
    views.push_back(i == 2 ? *in[i] : permuted(*in[i], toNCHW));
  llvm::SmallVector<TypeRef, 4> refs;
  for (const Type &t : views)
    refs.push_back(&t);
  EMBER_ASSIGN_OR_RETURN(auto res, inferConv(refs, attrs));
  return llvm::SmallVector<Type, 1>{permuted(res[0], toNHWC)};
}
