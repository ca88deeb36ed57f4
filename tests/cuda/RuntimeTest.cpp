//===- RuntimeTest.cpp - The in-process CUDA runtime on host stand-ins ----===//
//
// CUDARuntime.cpp runs here as it would on a GPU, over fake_cudart.c and
// the cuBLASLt/cuDNN stand-ins (the "CUDAHostEmu" backends): the eager
// first run, the CUDA graph captured after it and replayed by later runs,
// the stream-launch fallback where capture or instantiation is refused,
// the PTX fallback where the cubin does not load, the generated fallback
// of a library op that its library cannot plan or load, and the failing
// step named by -cuda-sync-each-step, and a loop kept as a loop (the flag
// read back after each test, stream launches). Every run is checked
// against the Interpreter.
//
//===----------------------------------------------------------------------===//
#include "CUDATestUtils.h"

#include <cstdlib>

using namespace ember;

namespace {
/// Stat indices of fake_cudart.c.
enum { CubinLoads, PtxLoads, StreamLaunches, GraphLaunches, Replayed, Graphs };

using test::pseudoRandom;

/// A Conv + residual + ReLU (cuDNN), a Gemm + bias + ReLU (cuBLASLt
/// epilogue) and a generated elementwise kernel.
void buildNet(Module &M, Function &F) {
  auto *x =
      M.createPlaceholder("x", Type(ElemKind::Float32, {2, 4, 8, 8}), false);
  auto *r =
      M.createPlaceholder("r", Type(ElemKind::Float32, {2, 6, 8, 8}), false);
  auto *v = M.createPlaceholder("v", Type(ElemKind::Float32, {6, 48}), false);
  auto *w = M.createConstant("w", pseudoRandom({6, 4, 3, 3}, 3));
  auto *b = M.createConstant("b", pseudoRandom({6}, 4));
  NodeValue c =
      F.createConv("conv", x, w, b, {NodeValue(r)}, {1, 1}, {1, 1, 1, 1},
                   {1, 1}, 1, int64_t(FusedActivation::Relu), 0.f, 0.f);
  auto *fw = M.createConstant("fw", pseudoRandom({40, 48}, 7));
  auto *fb = M.createConstant("fb", pseudoRandom({1, 40}, 8));
  NodeValue fc = F.createRelu(
      "relu", F.createGemm("fc", v, fw, F.createBroadcast("bias", fb, {6, 40}),
                           1.f, 1.f, 0, 1));
  NodeValue e = F.createTanh("tanh", fc);
  F.createSave("s1", c, M.createPlaceholder("y1", *c.getType(), true));
  F.createSave("s2", e, M.createPlaceholder("y2", *e.getType(), true));
}

/// Sets $EMBER_FAKE_REFUSE for one scope.
struct Refuse {
  explicit Refuse(const char *what) { setenv("EMBER_FAKE_REFUSE", what, 1); }
  ~Refuse() { unsetenv("EMBER_FAKE_REFUSE"); }
};

/// The network compiled for \p backend, run \p runs times with fresh
/// inputs, each run checked against the Interpreter; returns what the
/// runtime printed to stderr, or the first error.
struct Outcome {
  std::string stderrText, error;
};
/// What the code under test wrote to stderr: the captured text without the
/// one warning that ASan builds print when the host emulation's fibers
/// (makecontext/swapcontext) first run, which is not the code's output.
std::string capturedStderr() {
  std::string text = testing::internal::GetCapturedStderr(), kept;
  llvm::SmallVector<llvm::StringRef, 4> lines;
  llvm::StringRef(text).split(lines, '\n');
  for (llvm::StringRef line : lines)
    if (!line.empty() && !line.contains("ASan doesn't fully support"))
      kept += line.str() + "\n";
  return kept;
}

Outcome runRepeatedly(const char *backend, unsigned runs,
                      CodegenOptions codegen = CodegenOptions()) {
  registerAllBackends();
  test::registerCUDAHostEmulation();
  Module M;
  Function *F = M.createFunction("net");
  buildNet(M, *F);
  CompileOptions opts;
  opts.codegen = codegen;
  Outcome out;
  testing::internal::CaptureStderr();
  auto net = compileFunction(*F, **getBackend(backend), opts);
  auto ref = compileFunction(*F, **getBackend("Interpreter"), CompileOptions());
  for (unsigned i = 0; net && ref && i < runs && out.error.empty(); ++i) {
    Bindings b, rb;
    unsigned seed = 10 * i;
    for (Placeholder *p : M.getInputPlaceholders()) {
      b.insert(p, pseudoRandom(p->getType()->dims(), ++seed));
      rb.insert(p, pseudoRandom(p->getType()->dims(), seed));
    }
    if (llvm::Error err = net->function->run(b))
      out.error = llvm::toString(std::move(err));
    else if (llvm::Error err = ref->function->run(rb))
      out.error = llvm::toString(std::move(err));
    else
      for (Placeholder *p : M.getOutputPlaceholders()) {
        SCOPED_TRACE("run " + std::to_string(i) + " " + p->getName().str());
        test::expectNear(*b.get(p), *rb.get(p), 1e-5f);
      }
  }
  if (!net)
    out.error = llvm::toString(net.takeError());
  if (!ref)
    out.error = llvm::toString(ref.takeError());
  out.stderrText = capturedStderr();
  return out;
}
} // namespace

TEST(CUDARuntime, FirstRunIsEagerThenTheGraphIsReplayed) {
  for (const char *backend : {"CUDAHostEmu", "CUDAHostEmuGen"}) {
    SCOPED_TRACE(backend);
    test::resetFakeCUDAStats();
    Outcome o = runRepeatedly(backend, 3);
    EXPECT_EQ(o.error, "");
    EXPECT_EQ(o.stderrText, "");
    EXPECT_EQ(test::fakeCUDAStat(CubinLoads), 1);
    EXPECT_EQ(test::fakeCUDAStat(Graphs), 1);
    // Run 1 launches on the stream; runs 2 and 3 replay the graph.
    EXPECT_GT(test::fakeCUDAStat(StreamLaunches), 0);
    EXPECT_EQ(test::fakeCUDAStat(GraphLaunches), 2);
    EXPECT_GT(test::fakeCUDAStat(Replayed), 2);
  }
}

TEST(CUDARuntime, NoGraphWithGraphOff) {
  CodegenOptions cg;
  cg.cuda.graph = false;
  test::resetFakeCUDAStats();
  Outcome o = runRepeatedly("CUDAHostEmu", 2, cg);
  EXPECT_EQ(o.error, "");
  EXPECT_EQ(test::fakeCUDAStat(Graphs), 0);
  EXPECT_EQ(test::fakeCUDAStat(GraphLaunches), 0);
}

TEST(CUDARuntime, RefusedCaptureFallsBackToStreamLaunches) {
  for (const char *what : {"capture", "instantiate"}) {
    SCOPED_TRACE(what);
    Refuse refuse(what);
    test::resetFakeCUDAStats();
    Outcome o = runRepeatedly("CUDAHostEmu", 3);
    EXPECT_EQ(o.error, "");
    EXPECT_EQ(test::fakeCUDAStat(GraphLaunches), 0);
    // Said once, with the runtime's error name.
    llvm::StringRef err(o.stderrText);
    EXPECT_EQ(err.count("CUDA: no CUDA graph ("), 1u) << err.str();
    EXPECT_TRUE(err.contains("); running with stream launches")) << err.str();
    EXPECT_TRUE(err.contains(llvm::StringRef(what) == "capture"
                                 ? "cudaErrorStreamCaptureUnsupported"
                                 : "instantiating: cudaErrorFake"))
        << err.str();
  }
}

TEST(CUDARuntime, CubinRefusedLoadsThePtx) {
  Refuse refuse("cubin");
  test::resetFakeCUDAStats();
  Outcome o = runRepeatedly("CUDAHostEmuGen", 2);
  EXPECT_EQ(o.error, "");
  EXPECT_EQ(test::fakeCUDAStat(CubinLoads), 0);
  EXPECT_EQ(test::fakeCUDAStat(PtxLoads), 1);
}

TEST(CUDARuntime, UnplannableLibraryOpsRunTheirGeneratedKernels) {
  struct Case {
    const char *refuse, *says;
  } cases[] = {
      {"cudnn-plan", "conv: cuDNN cannot run it (planning returned "
                     "CUDNN_STATUS_NOT_SUPPORTED_SHAPE (3002)); running its "
                     "generated kernel emu_k"},
      {"cublaslt-plan", ": cuBLASLt cannot run it (planning returned "
                        "CUBLAS_STATUS_NOT_SUPPORTED (15)); running its "
                        "generated kernel emu_k"},
      {"cudnn-load", "conv: cuDNN cannot run it (cannot load libcudnn.so.9 "
                     "(fake)); running its generated kernel emu_k"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.refuse);
    Refuse refuse(c.refuse);
    test::resetFakeCUDAStats();
    Outcome o = runRepeatedly("CUDAHostEmu", 2);
    EXPECT_EQ(o.error, "");
    EXPECT_TRUE(llvm::StringRef(o.stderrText).contains(c.says)) << o.stderrText;
    // The fallback kernels are captured and replayed like the others.
    EXPECT_EQ(test::fakeCUDAStat(GraphLaunches), 1);
  }
}

TEST(CUDARuntime, SyncEachStepNamesTheFailingStep) {
  Refuse refuse("fault");
  CodegenOptions cg;
  Outcome o = runRepeatedly("CUDAHostEmuGen", 1, cg);
  EXPECT_TRUE(llvm::StringRef(o.error).contains(
      "rerun with -cuda-sync-each-step to name the failing step"))
      << o.error;
  cg.cuda.syncEachStep = true;
  o = runRepeatedly("CUDAHostEmuGen", 1, cg);
  EXPECT_TRUE(llvm::StringRef(o.error).starts_with("CUDA: step 1 of "))
      << o.error;
  EXPECT_TRUE(llvm::StringRef(o.error).contains(
      "failed: cudaErrorIllegalAddress: an illegal memory access was "
      "encountered (fake)"))
      << o.error;
}

namespace {
/// y = x + m * tanh(x) with the trip count m a run-time input: a loop kept
/// as a loop (loopcarry, loopbegin, the body, loopend, loopfinal).
void buildLoopNet(Module &M, Function &F) {
  auto *m = M.createPlaceholder("m", Type(ElemKind::Int64, {1}), false);
  auto *x = M.createPlaceholder("x", Type(ElemKind::Float32, {4, 8}), false);
  Tensor t(Type(ElemKind::Bool, {1}));
  t.getHandle<bool>().raw(0) = true;
  NodeValue cond =
      F.createLoopCarry("cond", M.createConstant("c", std::move(t)));
  NodeValue state = F.createLoopCarry("state", x);
  Node *begin = F.createLoopBegin("begin", m, cond, {state});
  NodeValue counter = begin->getNthResult(0);
  NodeValue p = F.createLoopParam("p", counter, state);
  NodeValue q = F.createAdd("q", F.createTanh("th", x), p);
  NodeValue cp = F.createLoopParam("cp", counter, cond);
  Node *end = F.createLoopEnd("end", counter, {cond, cp, state, q}, 1, -1);
  NodeValue fin = F.createLoopFinal("fin", end->getNthResult(0), state);
  F.createSave("save", fin, M.createPlaceholder("y", *fin.getType(), true));
}

/// Stream launches of the second run of the loop network with \p trips
/// iterations on CUDAHostEmuGen (both runs checked against the
/// Interpreter), or -1; what the runtime printed goes to \p stderrText.
int loopLaunches(int64_t trips, const CodegenOptions &codegen,
                 std::string &stderrText) {
  registerAllBackends();
  test::registerCUDAHostEmulation();
  Module M;
  Function *F = M.createFunction("net");
  buildLoopNet(M, *F);
  testing::internal::CaptureStderr();
  CompileOptions opts;
  opts.codegen = codegen;
  auto net = compileFunction(*F, **getBackend("CUDAHostEmuGen"), opts);
  auto ref = compileFunction(*F, **getBackend("Interpreter"), CompileOptions());
  int launches = -1;
  if (net && ref) {
    Bindings b, rb;
    Tensor m(Type(ElemKind::Int64, {1}));
    m.getHandle<int64_t>().raw(0) = trips;
    for (Bindings *bs : {&b, &rb}) {
      bs->insert(M.getPlaceholderByName("m"), m.clone());
      bs->insert(M.getPlaceholderByName("x"), pseudoRandom({4, 8}, 5));
    }
    bool ran = true;
    auto ok = [&](llvm::Error err) {
      ran &= !err;
      EXPECT_FALSE(bool(err)) << llvm::toString(std::move(err));
    };
    // Two runs: the second is where a graph would be replayed.
    ok(net->function->run(b));
    test::resetFakeCUDAStats();
    ok(net->function->run(b));
    ok(ref->function->run(rb));
    Placeholder *y = M.getPlaceholderByName("y");
    if (ran) {
      test::expectNear(*b.get(y), *rb.get(y), 1e-5f);
      launches = test::fakeCUDAStat(StreamLaunches);
    }
    EXPECT_EQ(test::fakeCUDAStat(GraphLaunches), 0);
  }
  EXPECT_TRUE(bool(net)) << (net ? "" : llvm::toString(net.takeError()));
  EXPECT_TRUE(bool(ref)) << (ref ? "" : llvm::toString(ref.takeError()));
  stderrText = capturedStderr();
  return launches;
}
} // namespace

TEST(CUDARuntime, LoopsJumpOnTheFlagWithStreamLaunches) {
  for (bool sync : {false, true}) {
    SCOPED_TRACE(sync ? "sync each step" : "graph requested");
    CodegenOptions cg;
    cg.cuda.syncEachStep = sync;
    std::string err[3];
    int l0 = loopLaunches(0, cg, err[0]);
    int l1 = loopLaunches(1, cg, err[1]);
    int l5 = loopLaunches(5, cg, err[2]);
    // Zero trips skip the body and the loopend; each trip runs them once.
    ASSERT_GT(l1, l0);
    EXPECT_EQ(l5 - l0, 5 * (l1 - l0));
    for (const std::string &e : err)
      EXPECT_EQ(llvm::StringRef(e).count("CUDA: no CUDA graph (the network "
                                         "has a loop kept as a loop"),
                sync ? 0u : 1u)
          << e;
  }
}
