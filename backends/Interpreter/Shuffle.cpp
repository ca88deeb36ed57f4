//===- Shuffle.cpp - ChannelShuffle kernel --------------------------------===//
//
// Moves whole channel planes, so one implementation serves every element
// kind.
//
//===----------------------------------------------------------------------===//
#include "Kernels.h"

#include <cstring>

using namespace ember;
using namespace ember::interp;

static void channelShuffle(const ChannelShuffleInst &I,
                           const ExecContext &ctx) {
  TypeRef ty = I.getDest()->getType();
  llvm::ArrayRef<dim_t> d = ty->dims();
  dim_t groups = I.getGroup(), channels = d[1], perGroup = channels / groups;
  size_t plane = ty->sizeInBytes() / (d[0] * channels);
  const char *src = ctx.addr(I.getInput());
  char *dst = ctx.addr(I.getDest());
  for (dim_t n = 0; n < d[0]; ++n)
    for (dim_t i = 0; i < groups; ++i)
      for (dim_t j = 0; j < perGroup; ++j)
        std::memcpy(dst + (n * channels + j * groups + i) * plane,
                    src + (n * channels + i * perGroup + j) * plane, plane);
}

bool interp::executeShuffle(const Instruction &I, const ExecContext &ctx) {
  return runKernelFor(I, ctx, channelShuffle);
}
