//===- Pipeline.cpp - Graph to runnable code for one backend --------------===//
#include "ember/Backend/Pipeline.h"

#include "ember/Base/Progress.h"

#include "ember/Graph/Printer.h"
#include "ember/Graph/Verifier.h"
#include "ember/IR/IRGen.h"
#include "ember/IR/IROptimizer.h"
#include "ember/IR/IRPrinter.h"

using namespace ember;

/// One error that names every node the backend cannot run.
static llvm::Error checkSupport(const Function &F, const Backend &B) {
  std::string missing;
  unsigned count = 0;
  for (Node *n : topologicalOrder(F)) {
    if (llvm::isa<SaveNode>(n) || llvm::isa<ReshapeNode>(n) ||
        B.isOpSupported(*n))
      continue;
    if (isLoopOp(toOpKind(n->getKind())))
      return makeErrorF("backend {0} does not run loops kept as loops yet "
                        "(node {1}; docs/ControlFlow.md): use the "
                        "Interpreter",
                        B.getName(), n->getName());
    ++count;
    missing += "\n  " + n->getName().str() + " (" + n->getKindName().str() +
               " " + n->getType()->toString() + ")";
  }
  if (!count)
    return llvm::Error::success();
  return makeErrorF("backend {0} cannot run {1} node(s):{2}", B.getName(),
                    count, missing);
}

llvm::Expected<std::unique_ptr<IRFunction>>
ember::optimizeAndGenerateIR(Function &F, const Backend &B,
                             const CompileOptions &opts, size_t *schedulePeak) {
  EMBER_RETURN_IF_ERR(verifyFunction(F));
  if (opts.codegen.precision.precision == FloatPrecision::BF16 &&
      !B.supportsBF16MatMul())
    return makeErrorF("backend {0} does not support -precision=bf16 yet",
                      B.getName());
  const PrecisionOptions &prec = opts.codegen.precision;
  bool fp16 = prec.precision == FloatPrecision::FP16;
  if ((fp16 || prec.storesNarrowWeights()) && !B.supportsNarrowWeights())
    return makeErrorF("backend {0} does not support {1} yet", B.getName(),
                      fp16 ? "-precision=fp16" : "-weights-precision");
  PassContext ctx = makePassContext(B, opts);
  EMBER_RETURN_IF_ERR(runPipeline(F,
                                  opts.pipeline.value_or(getDefaultPipeline()),
                                  ctx, opts.passes)
                          .takeError());
  noteStageDone("optimize");
  if (llvm::Error err = verifyFunction(F))
    return makeErrorF("internal error: the graph pipeline broke the graph "
                      "(use -verify-each to find the pass): {0}",
                      errorToString(std::move(err)));
  if (opts.dumpGraph)
    printFunction(F, *opts.dumpGraph);
  if (opts.dumpGraphDot)
    printFunctionDot(F, *opts.dumpGraphDot);
  EMBER_RETURN_IF_ERR(checkSupport(F, B));
  std::vector<Node *> schedule = scheduleFunction(F);
  if (schedulePeak)
    *schedulePeak = schedulePeakBytes(F, schedule);
  EMBER_ASSIGN_OR_RETURN(auto ir, generateIR(F, schedule));
  if (llvm::Error err = verifyIR(*ir))
    return makeErrorF("internal error: invalid IR: {0}",
                      errorToString(std::move(err)));
  if (!opts.optimizeIR) {
    noteStageDone("IR");
    return ir;
  }
#ifdef NDEBUG
  constexpr bool verifyEach = false;
#else
  constexpr bool verifyEach = true;
#endif
  EMBER_RETURN_IF_ERR(optimizeIR(*ir, verifyEach));
  if (B.convResidualInPlace())
    EMBER_RETURN_IF_ERR(runIRPasses(*ir, {"reuse-conv-residual"}, verifyEach));
  if (llvm::Error err = verifyIR(*ir))
    return makeErrorF("internal error: the IR optimizer broke the IR: {0}",
                      errorToString(std::move(err)));
  noteStageDone("IR");
  return ir;
}

llvm::Expected<CompiledNetwork>
ember::compileFunction(Function &F, const Backend &B,
                       const CompileOptions &opts) {
  CompiledNetwork net;
  EMBER_ASSIGN_OR_RETURN(std::unique_ptr<IRFunction> ir,
                         optimizeAndGenerateIR(F, B, opts, &net.schedulePeak));
  net.plan = planMemory(*ir);
  if (llvm::Error err = verifyMemoryPlan(*ir, net.plan))
    return makeErrorF("internal error: invalid memory plan: {0}",
                      errorToString(std::move(err)));
  if (opts.dumpIR)
    printIR(*ir, *opts.dumpIR, &net.plan);
  if (opts.printConvPlans)
    EMBER_RETURN_IF_ERR(
        B.printConvPlans(*ir, opts.codegen, *opts.printConvPlans));
  net.ir = std::move(ir);
  EMBER_ASSIGN_OR_RETURN(
      net.function, B.compile(F.getParent(), net.ir, net.plan, opts.codegen));
  net.function = withInputChecks(F.getParent(), std::move(net.function));
  return net;
}
