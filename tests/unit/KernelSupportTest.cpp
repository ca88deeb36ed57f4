//===- KernelSupportTest.cpp - Support predicates over every op and kind --===//
//
// Which nodes the shared kernel lowering covers (kir::hasKernelLowering) and
// which the Interpreter runs, for every op of the table over every element
// kind of its result, its first input and its second input (that of the
// first, Int32 or Int64: the index operands), with every int attribute 0
// and then, one at a time, 1 and 4 (the attributes some ops' support
// depends on: Scatter reductions, PoolND's IsAvg, Resize's coordinate
// mode). The answers are compared with KernelSupport.golden, written from
// the hand-written switches the op table's kernel types replaced: the table
// must answer every question as they did. In the golden, a "kernel" line
// per set of result kinds that answer alike lists '1' (covered) or '.' per
// first-input kind, in ElemKind order, three times (second input: same
// kind, Int32, Int64); an attribute variant is listed only where it answers
// differently; an "interpreter" line lists the Interpreter's answer per result
// kind.
//
//===----------------------------------------------------------------------===//
#include "ember/Backend/Backend.h"
#include "ember/Graph/Graph.h"
#include "ember/Graph/OpInfo.h"
#include "ember/Kernel/LowerToKernel.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <fstream>

using namespace ember;

namespace {

constexpr unsigned kNumElemKinds = unsigned(ElemKind::Float64) + 1;

/// The table's attributes of \p op, every one 0 (or empty) but int
/// attribute \p which, set to \p value.
AttrList attrsOf(OpKind op, int which, int64_t value) {
  AttrList attrs;
  llvm::ArrayRef<AttrInfo> infos = getOpInfo(op).attrs;
  for (unsigned i = 0; i < infos.size(); ++i) {
    switch (infos[i].kind) {
    case AttrKind::Int:
      attrs.push_back(Attr::makeInt(int(i) == which ? value : 0));
      break;
    case AttrKind::Float:
      attrs.push_back(Attr::makeFloat(0.f));
      break;
    case AttrKind::Ints:
      attrs.push_back(Attr::makeInts({}));
      break;
    case AttrKind::Floats:
      attrs.push_back(Attr::makeFloats({}));
      break;
    case AttrKind::String:
      attrs.push_back(Attr::makeString(""));
      break;
    case AttrKind::ElemKind:
      attrs.push_back(Attr::makeElemKind(ElemKind::Float32));
      break;
    }
  }
  return attrs;
}

/// The results a node of \p info gets: its table's, and one where the
/// table lists none (Split's are made per node), since the predicates read
/// the first result's kind.
size_t numResults(const OpInfo &info) {
  return std::max<size_t>(info.results.size(), 1);
}

/// Placeholders of every element kind, shape [2].
struct Operands {
  Module M;
  Function *F = M.createFunction("f");
  std::vector<NodeValue> of;
  Operands() {
    for (unsigned k = 0; k < kNumElemKinds; ++k)
      of.push_back(M.createPlaceholder("p", Type(ElemKind(k), {2}), false));
  }
};

/// One line per result kind with any answer true: the answers over the
/// first input's kinds, for the second input of the first's kind, Int32
/// and Int64.
std::string kernelAnswers(Operands &ops, OpKind op, const AttrList &attrs) {
  const OpInfo &info = getOpInfo(op);
  size_t numIn = info.inputs.size(), numRes = numResults(info);
  // Result kinds with the same answers share a line, in ElemKind order.
  std::vector<std::pair<std::string, std::string>> lines; // kinds, answers
  for (unsigned r = 0; r < kNumElemKinds; ++r) {
    std::string line;
    bool any = false;
    for (ElemKind second :
         {ElemKind::Float32, ElemKind::Int32, ElemKind::Int64}) {
      line += ' ';
      for (unsigned a = 0; a < kNumElemKinds; ++a) {
        std::vector<NodeValue> in;
        for (size_t i = 0; i < numIn; ++i)
          in.push_back(
              ops.of[i == 1 && second != ElemKind::Float32 ? unsigned(second)
                                                           : a]);
        std::vector<TypeRef> res(numRes, ops.of[r].getType());
        Node *n = ops.F->createNodeWithTypes(op, "n", in, res, attrs);
        bool yes = kir::hasKernelLowering(*n);
        ops.F->eraseNode(n);
        line += yes ? '1' : '.';
        any |= yes;
      }
    }
    if (!any)
      continue;
    std::string kind = elemKindName(ElemKind(r)).str();
    auto same = std::find_if(lines.begin(), lines.end(),
                             [&](const auto &l) { return l.second == line; });
    if (same == lines.end())
      lines.push_back({kind, line});
    else
      same->first += "," + kind;
  }
  std::string out;
  for (const auto &[kinds, line] : lines)
    out += "  " + kinds + ":" + line + "\n";
  return out;
}

/// The whole dump: kernel lowering per op and attribute variant, then the
/// Interpreter's answer per op over the result kinds.
std::string supportDump() {
  Operands ops;
  registerAllBackends();
  const Backend *interp = llvm::cantFail(getBackend("Interpreter"));
  std::string out;
  for (unsigned o = 0; o < kNumOpKinds; ++o) {
    OpKind op = OpKind(o);
    const OpInfo &info = getOpInfo(op);
    std::string base = kernelAnswers(ops, op, attrsOf(op, -1, 0));
    out += std::string("kernel ") + info.name + "\n" + base;
    for (unsigned i = 0; i < info.attrs.size(); ++i) {
      if (info.attrs[i].kind != AttrKind::Int)
        continue;
      for (int64_t v : {1, 4}) {
        std::string var = kernelAnswers(ops, op, attrsOf(op, int(i), v));
        if (var != base)
          out += std::string(" with ") + info.attrs[i].name + "=" +
                 std::to_string(v) + "\n" + var;
      }
    }
    std::string line = std::string("interpreter ") + info.name + ": ";
    for (unsigned r = 0; r < kNumElemKinds; ++r) {
      std::vector<NodeValue> in(info.inputs.size(), ops.of[r]);
      std::vector<TypeRef> res(numResults(info), ops.of[r].getType());
      Node *n =
          ops.F->createNodeWithTypes(op, "n", in, res, attrsOf(op, -1, 0));
      line += interp->isOpSupported(*n) ? '1' : '.';
      ops.F->eraseNode(n);
    }
    out += line + "\n";
  }
  return out;
}

} // namespace

TEST(KernelSupport, EveryOpAndKindAnswersAsTheGolden) {
  std::string golden = EMBER_SOURCE_DIR "/tests/unit/KernelSupport.golden";
  auto buf = llvm::MemoryBuffer::getFile(golden);
  ASSERT_TRUE(bool(buf)) << "cannot read " << golden;
  std::string got = supportDump();
  if (got != (*buf)->getBuffer().str()) {
    std::string path = testing::TempDir() + "KernelSupport.actual";
    std::ofstream(path) << got;
    FAIL() << "support answers differ from " << golden << "; now: " << path;
  }
}
