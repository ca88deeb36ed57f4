//===- OpTable.cpp - The generated op table and its generic checks -------===//
#include "ember/Graph/OpInfo.h"

#include "Infer.h"

#include "ember/Base/Error.h"

using namespace ember;

namespace {
#include "ember/Generated/OpTable.inc"
} // namespace

const OpInfo &ember::getOpInfo(OpKind kind) { return kOpInfos[unsigned(kind)]; }

std::optional<OpKind> ember::lookupOpKind(llvm::StringRef name) {
  for (unsigned i = 0; i < kNumOpKinds; ++i)
    if (name == kOpInfos[i].name)
      return OpKind(i);
  return std::nullopt;
}

static llvm::Error checkRule(const OpInfo &info, const VerifyRule &r,
                             llvm::StringRef what, llvm::ArrayRef<TypeRef> in) {
  auto inName = [&](unsigned i) { return info.inputs[i]; };
  switch (r.kind) {
  case RuleKind::None:
    return llvm::Error::success();
  case RuleKind::SameType:
    // Same bytes: quantization parameters are not part of what an op reads.
    if (!in[r.a]->isSameStorage(*in[r.b]))
      return makeErrorF("{0} ({1}): operands {2} {3} and {4} {5} must have "
                        "the same type",
                        what, info.name, inName(r.a), in[r.a]->toString(),
                        inName(r.b), in[r.b]->toString());
    return llvm::Error::success();
  case RuleKind::Rank:
    if (in[r.a]->rank() != r.b)
      return makeErrorF("{0} ({1}): operand {2} must have rank {3}, got {4}",
                        what, info.name, inName(r.a), r.b, in[r.a]->toString());
    return llvm::Error::success();
  case RuleKind::MinRank:
    if (in[r.a]->rank() < r.b)
      return makeErrorF(
          "{0} ({1}): operand {2} must have rank at least {3}, got {4}", what,
          info.name, inName(r.a), r.b, in[r.a]->toString());
    return llvm::Error::success();
  case RuleKind::Float:
    if (!isFloatKind(in[r.a]->getElemKind()))
      return makeErrorF("{0} ({1}): operand {2} must be floating point, got "
                        "{3}",
                        what, info.name, inName(r.a), in[r.a]->toString());
    return llvm::Error::success();
  }
  return llvm::Error::success();
}

llvm::Expected<llvm::SmallVector<Type, 1>>
ember::checkAndInfer(OpKind kind, llvm::StringRef what,
                     llvm::ArrayRef<TypeRef> inputs, const AttrList &attrs,
                     bool allowEmpty) {
  const OpInfo &info = getOpInfo(kind);
  // A variadic tail may be empty; inference checks what it needs.
  size_t fixed = info.inputs.size() - (info.variadic ? 1 : 0);
  if (info.variadic ? inputs.size() < fixed : inputs.size() != fixed)
    return makeErrorF("{0} ({1}): expected {2}{3} operands, got {4}", what,
                      info.name, info.variadic ? "at least " : "", fixed,
                      inputs.size());
  if (attrs.size() != info.attrs.size())
    return makeErrorF("{0} ({1}): expected {2} attributes, got {3}", what,
                      info.name, info.attrs.size(), attrs.size());
  for (size_t i = 0; i < attrs.size(); ++i)
    if (attrs[i].kind != info.attrs[i].kind)
      return makeErrorF("{0} ({1}): attribute {2} has the wrong kind", what,
                        info.name, info.attrs[i].name);
  for (const VerifyRule &r : info.rules)
    EMBER_RETURN_IF_ERR(checkRule(info, r, what, inputs));
  auto types = info.infer(inputs, attrs);
  if (!types)
    return makeErrorF("{0} ({1}): {2}", what, info.name,
                      errorToString(types.takeError()));
  for (const Type &t : *types) {
    if (t.rank() > kMaxRank)
      return makeErrorF("{0} ({1}): result rank {2} exceeds the maximum {3}",
                        what, info.name, t.rank(), kMaxRank);
    for (dim_t d : t.dims())
      if (d < 0 || (d == 0 && !allowEmpty))
        return makeErrorF("{0} ({1}): result type {2} has a non-positive "
                          "dimension",
                          what, info.name, t.toString());
  }
  return types;
}
