//===- InferShuffle.cpp - Result types of ChannelShuffle ------------------===//
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
