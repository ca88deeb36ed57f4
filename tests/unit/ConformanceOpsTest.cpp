//===- ConformanceOpsTest.cpp - Ops composed for ONNX conformance ---------===//
//
// Graph inputs with zero elements (constants: their type is their value),
// the optimizer steps of ai.onnx.preview.training, DFT and GridSample,
// composed of existing nodes at import. Expected values come from the ONNX
// formulas evaluated here in double; every backend is held to them.
//
//===----------------------------------------------------------------------===//
#include "ember/Importer/ONNXImporter.h"

#include "ONNXBuilder.h"
#include "TestUtils.h"

#include <cmath>

using namespace ember;
using namespace ember::test;

namespace {

/// Imports \p b and runs it on \p backend with \p inputs.
std::vector<Tensor> importAndRun(const ONNXBuilder &b,
                                 const std::string &backend,
                                 std::vector<Tensor> inputs) {
  Module M;
  auto F = importONNXBuffer(b.serialize(), "m", M);
  if (!F) {
    ADD_FAILURE() << llvm::toString(F.takeError());
    return {};
  }
  return compileAndRun(M, **F, backend, std::move(inputs));
}

Tensor scalarF(float v) {
  Tensor t(ElemKind::Float32, {});
  t.getHandle<float>().raw(0) = v;
  return t;
}

Tensor scalarI(int64_t v) {
  Tensor t(ElemKind::Int64, {});
  t.getHandle<int64_t>().raw(0) = v;
  return t;
}

} // namespace

TEST(ConformanceOps, EmptyAxesInputIsAConstant) {
  for (int noop : {0, 1}) {
    ONNXBuilder b(13);
    b.input("x", {2, 3});
    b.input("axes", {0}, onnx::TensorProto::INT64);
    auto &n = b.node("ReduceSum", {"x", "axes"}, {"y"}, "r");
    ONNXBuilder::attrInt(n, "noop_with_empty_axes", noop);
    b.output("y",
             noop ? std::vector<int64_t>{2, 3} : std::vector<int64_t>{1, 1});
    for (const std::string &backend : testBackends()) {
      SCOPED_TRACE(backend + " noop=" + std::to_string(noop));
      Tensor x = makeTensor({2, 3}, {1, 2, 3, 4, 5, 6});
      Tensor want = noop ? x.clone() : makeTensor({1, 1}, {21});
      auto outs = importAndRun(
          b, backend, tensors(std::move(x), Tensor(ElemKind::Int64, {0})));
      ASSERT_EQ(outs.size(), 1u);
      expectNear(outs[0], want, 0);
    }
  }
}

// Empty data gives an empty result where the op moves data (an empty
// Constant, no node); a reduction of it, whose result is not empty, is a
// clean error (docs/Architecture.md, "Folding at import").
TEST(ConformanceOps, EmptyDataFlowsToAnEmptyResult) {
  ONNXBuilder b(13);
  b.input("x", {0, 3});
  b.node("Relu", {"x"}, {"y"}, "r");
  b.output("y", {0, 3});
  Module M;
  auto F = importONNXBuffer(b.serialize(), "m", M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
}

TEST(ConformanceOps, EmptyDataIntoAReductionIsACleanError) {
  ONNXBuilder b(13);
  b.input("x", {0, 3});
  b.node("ReduceSum", {"x"}, {"y"}, "r");
  b.output("y", {1, 3});
  Module M;
  auto F = importONNXBuffer(b.serialize(), "m", M);
  ASSERT_FALSE(bool(F));
  EXPECT_NE(llvm::toString(F.takeError())
                .find("node 'r' (ReduceSum): input 'x' is empty float<0 x 3>"),
            std::string::npos);
}

namespace {

/// One optimizer node of the training domain over X [2] (and G, V, H).
ONNXBuilder trainingModel(const std::string &op, int perTensor,
                          const std::vector<std::pair<std::string, float>> &fa,
                          const std::string &mode = "") {
  ONNXBuilder b(13);
  b.opsetImport("ai.onnx.preview.training", 1);
  b.input("R", {});
  b.input("T", {}, onnx::TensorProto::INT64);
  std::vector<std::string> ins = {"R", "T"}, outs;
  const char *names[] = {"X", "G", "V", "H"};
  for (int k = 0; k < perTensor; ++k) {
    std::string in =
        perTensor == 3 && k == 2 && op == "Adagrad" ? "H" : names[k];
    b.input(in, {2});
    ins.push_back(in);
    if (k != 1) {
      outs.push_back(in + "_new");
      b.output(in + "_new", {2});
    }
  }
  auto &n = b.node(op, ins, outs, "opt");
  n.set_domain("ai.onnx.preview.training");
  for (auto &[name, v] : fa)
    ONNXBuilder::attrFloat(n, name, v);
  if (!mode.empty()) {
    auto *a = n.add_attribute();
    a->set_name("mode");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(mode);
  }
  return b;
}

const double kX[2] = {1.5, -2.0}, kG[2] = {-0.5, 3.0}, kV[2] = {0.25, 1.0},
             kH[2] = {0.5, 2.0};

std::vector<Tensor> trainingInputs(float r, int64_t t, int perTensor) {
  std::vector<Tensor> v = tensors(scalarF(r), scalarI(t));
  const double *vals[] = {kX, kG, perTensor == 3 ? kH : kV, kH};
  for (int k = 0; k < perTensor; ++k)
    v.push_back(makeTensor({2}, {float(vals[k][0]), float(vals[k][1])}));
  return v;
}

} // namespace

TEST(ConformanceOps, AdagradFollowsTheONNXFormula) {
  double r = 0.1, decay = 0.5, eps = 1e-3, norm = 0.01;
  auto b = trainingModel(
      "Adagrad", 3,
      {{"decay_factor", decay}, {"epsilon", eps}, {"norm_coefficient", norm}});
  for (const std::string &backend : testBackends())
    for (int64_t t : {0, 4}) {
      SCOPED_TRACE(backend + " T=" + std::to_string(t));
      auto outs = importAndRun(b, backend, trainingInputs(r, t, 3));
      ASSERT_EQ(outs.size(), 2u);
      for (int i = 0; i < 2; ++i) {
        double rr = r / (1 + t * decay), g = norm * kX[i] + kG[i];
        double h = kH[i] + g * g;
        EXPECT_NEAR(outs[0].elementAsDouble(i),
                    kX[i] - rr * g / (std::sqrt(h) + eps), 1e-5);
        EXPECT_NEAR(outs[1].elementAsDouble(i), h, 1e-5);
      }
    }
}

TEST(ConformanceOps, MomentumWeighsTheFirstGradientByOne) {
  double r = 0.1, alpha = 0.9, beta = 0.5, norm = 0.01;
  for (const std::string mode : {"standard", "nesterov"}) {
    auto b = trainingModel(
        "Momentum", 3,
        {{"alpha", alpha}, {"beta", beta}, {"norm_coefficient", norm}}, mode);
    for (const std::string &backend : testBackends())
      for (int64_t t : {0, 2}) {
        SCOPED_TRACE(backend + " " + mode + " T=" + std::to_string(t));
        auto outs = importAndRun(b, backend, trainingInputs(r, t, 3));
        ASSERT_EQ(outs.size(), 2u);
        for (int i = 0; i < 2; ++i) {
          double g = norm * kX[i] + kG[i];
          double v = alpha * kH[i] + (t > 0 ? beta : 1) * g;
          double dir = mode == "standard" ? v : g + alpha * v;
          EXPECT_NEAR(outs[0].elementAsDouble(i), kX[i] - r * dir, 1e-5);
          EXPECT_NEAR(outs[1].elementAsDouble(i), v, 1e-5);
        }
      }
  }
}

TEST(ConformanceOps, AdamCorrectsTheBiasFromTheFirstStep) {
  double r = 0.1, alpha = 0.8, beta = 0.7, eps = 1e-2, norm = 0.01, post = 0.1;
  auto b = trainingModel("Adam", 4,
                         {{"alpha", alpha},
                          {"beta", beta},
                          {"epsilon", eps},
                          {"norm_coefficient", norm},
                          {"norm_coefficient_post", post}});
  for (const std::string &backend : testBackends())
    for (int64_t t : {0, 3}) {
      SCOPED_TRACE(backend + " T=" + std::to_string(t));
      auto outs = importAndRun(b, backend, trainingInputs(r, t, 4));
      ASSERT_EQ(outs.size(), 3u);
      double ra = t > 0 ? r * std::sqrt(1 - std::pow(beta, t)) /
                              (1 - std::pow(alpha, t))
                        : r;
      for (int i = 0; i < 2; ++i) {
        double g = norm * kX[i] + kG[i];
        double v = alpha * kV[i] + (1 - alpha) * g;
        double h = beta * kH[i] + (1 - beta) * g * g;
        double x = (1 - post) * (kX[i] - ra * v / (std::sqrt(h) + eps));
        EXPECT_NEAR(outs[0].elementAsDouble(i), x, 1e-5);
        EXPECT_NEAR(outs[1].elementAsDouble(i), v, 1e-5);
        EXPECT_NEAR(outs[2].elementAsDouble(i), h, 1e-5);
      }
    }
}

TEST(ConformanceOps, DefaultDomainNodesNeedADefaultOpset) {
  auto b = trainingModel("Adagrad", 3, {});
  std::string bytes = b.serialize();
  onnx::ModelProto m;
  ASSERT_TRUE(m.ParseFromString(bytes));
  m.mutable_opset_import()->DeleteSubrange(0, 1); // keep the training one
  {
    Module M;
    EXPECT_TRUE(bool(importONNXBuffer(m.SerializeAsString(), "m", M)));
  }
  auto *n = m.mutable_graph()->add_node();
  n->set_op_type("Relu");
  n->add_input("X");
  n->add_output("Z");
  Module M;
  auto F = importONNXBuffer(m.SerializeAsString(), "m", M);
  ASSERT_FALSE(bool(F));
  EXPECT_EQ(llvm::toString(F.takeError()),
            "m: the model imports no opset of the default ONNX domain");
}

namespace {

/// A float tensor of \p dims with values from a fixed sequence in [-1, 1].
Tensor wave(llvm::ArrayRef<dim_t> dims) {
  Tensor t(ElemKind::Float32, dims);
  int i = 0;
  for (float &v : t.getHandle<float>())
    v = float(std::sin(0.7 * i++ + 0.3));
  return t;
}

} // namespace

TEST(ConformanceOps, DFTMatchesTheDefinition) {
  // [batch 2, n 5, comps] along axis 1; forward, inverse, onesided with a
  // longer dft_length (zero padding) and a shorter one (truncation).
  struct Case {
    int64_t comps, inverse, onesided, len;
  };
  for (Case c : {Case{2, 0, 0, 5}, Case{2, 1, 0, 5}, Case{1, 0, 1, 8},
                 Case{1, 0, 0, 3}}) {
    int64_t n = 5, bins = c.onesided ? c.len / 2 + 1 : c.len;
    ONNXBuilder b(17);
    b.input("x", {2, n, c.comps});
    b.initializerInts("l", {c.len});
    auto &node = b.node("DFT", {"x", "l"}, {"y"}, "dft");
    ONNXBuilder::attrInt(node, "inverse", c.inverse);
    ONNXBuilder::attrInt(node, "onesided", c.onesided);
    b.output("y", {2, bins, 2});
    Tensor x = wave({2, dim_t(n), dim_t(c.comps)});
    Tensor want(ElemKind::Float32, {2, dim_t(bins), 2});
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t k = 0; k < bins; ++k) {
        double re = 0, im = 0;
        for (int64_t i = 0; i < std::min(n, c.len); ++i) {
          double a = (c.inverse ? 2 : -2) * M_PI * double(i * k) / c.len;
          double xr = x.elementAsDouble((r * n + i) * c.comps),
                 xi = c.comps == 2
                          ? x.elementAsDouble((r * n + i) * c.comps + 1)
                          : 0;
          re += xr * std::cos(a) - xi * std::sin(a);
          im += xr * std::sin(a) + xi * std::cos(a);
        }
        double s = c.inverse ? 1.0 / c.len : 1;
        want.getHandle<float>().raw((r * bins + k) * 2) = float(re * s);
        want.getHandle<float>().raw((r * bins + k) * 2 + 1) = float(im * s);
      }
    for (const std::string &backend : testBackends()) {
      SCOPED_TRACE(backend + " case len=" + std::to_string(c.len));
      auto outs = importAndRun(b, backend, tensors(x.clone()));
      ASSERT_EQ(outs.size(), 1u);
      expectNear(outs[0], want, 1e-5f); // float sums of 5 unit terms
    }
  }
}

namespace {

/// The ONNX GridSample definition in double, for linear interpolation of
/// a [1, 1, h, w] image: taps padded by \p pad (0 zeros, 1 border, 2
/// reflection); align_corners = 0.
double gridSampleRef(const Tensor &x, int64_t h, int64_t w, double gx,
                     double gy, int pad) {
  auto reflect = [](double v, double lo, double hi) {
    double r = hi - lo, t = std::fmod(v - lo, 2 * r);
    if (t < 0)
      t += 2 * r;
    return lo + (t <= r ? t : 2 * r - t);
  };
  auto coord = [&](double g, int64_t d) {
    double v = ((g + 1) * d - 1) / 2;
    if (v < -0.5 || v > d - 0.5) {
      if (pad == 1)
        v = std::min(std::max(v, 0.0), double(d - 1));
      if (pad == 2)
        v = reflect(v, -0.5, d - 0.5);
    }
    return v;
  };
  auto pixel = [&](int64_t iy, int64_t ix) {
    if (pad == 0 && (iy < 0 || iy >= h || ix < 0 || ix >= w))
      return 0.0;
    if (pad == 2) {
      iy = int64_t(reflect(double(iy), -0.5, h - 0.5));
      ix = int64_t(reflect(double(ix), -0.5, w - 0.5));
    }
    iy = std::min<int64_t>(std::max<int64_t>(iy, 0), h - 1);
    ix = std::min<int64_t>(std::max<int64_t>(ix, 0), w - 1);
    return x.elementAsDouble(iy * w + ix);
  };
  double px = coord(gx, w), py = coord(gy, h);
  int64_t x0 = int64_t(std::floor(px)), y0 = int64_t(std::floor(py));
  double fx = px - x0, fy = py - y0;
  return (1 - fy) * ((1 - fx) * pixel(y0, x0) + fx * pixel(y0, x0 + 1)) +
         fy * ((1 - fx) * pixel(y0 + 1, x0) + fx * pixel(y0 + 1, x0 + 1));
}

} // namespace

TEST(ConformanceOps, GridSampleLinearMatchesTheDefinition) {
  // Points inside, near the borders and well outside the image ([-1, 1] is
  // the image), so every padding mode's rule is exercised.
  const int64_t h = 3, w = 4, ho = 2, wo = 5;
  Tensor x = wave({1, 1, h, w});
  Tensor grid(ElemKind::Float32, {1, ho, wo, 2});
  for (int64_t i = 0; i < ho * wo * 2; ++i)
    grid.getHandle<float>().raw(i) = float(-2.3 + 0.47 * i);
  const char *pads[] = {"zeros", "border", "reflection"};
  for (int pad = 0; pad < 3; ++pad) {
    ONNXBuilder b(16);
    b.input("x", {1, 1, h, w});
    b.input("g", {1, ho, wo, 2});
    auto &node = b.node("GridSample", {"x", "g"}, {"y"}, "gs");
    auto *a = node.add_attribute();
    a->set_name("padding_mode");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(pads[pad]);
    b.output("y", {1, 1, ho, wo});
    Tensor want(ElemKind::Float32, {1, 1, ho, wo});
    for (int64_t p = 0; p < ho * wo; ++p)
      want.getHandle<float>().raw(p) =
          float(gridSampleRef(x, h, w, grid.elementAsDouble(2 * p),
                              grid.elementAsDouble(2 * p + 1), pad));
    for (const std::string &backend : testBackends()) {
      SCOPED_TRACE(backend + " " + pads[pad]);
      auto outs = importAndRun(b, backend, tensors(x.clone(), grid.clone()));
      ASSERT_EQ(outs.size(), 1u);
      expectNear(outs[0], want, 1e-5f); // four float products
    }
  }
}

namespace {

/// NonMaxSuppression over boxes [1, 6, 4] and scores [1, 2, 6], its
/// operands graph inputs (\p runtime, output declared [k, 3]) or
/// initializers of \p boxes and \p scores.
ONNXBuilder nmsModel(bool runtime, const Tensor &boxes, const Tensor &scores,
                     int64_t k) {
  ONNXBuilder b(11);
  auto floats = [](const Tensor &t) {
    std::vector<float> v;
    for (dim_t i = 0; i < t.size(); ++i)
      v.push_back(float(t.elementAsDouble(i)));
    return v;
  };
  if (runtime) {
    b.input("boxes", {1, 6, 4});
    b.input("scores", {1, 2, 6});
  } else {
    b.initializer("boxes", {1, 6, 4}, floats(boxes));
    b.initializer("scores", {1, 2, 6}, floats(scores));
  }
  b.initializerInts("max", {2});
  b.initializer("iou", {1}, {0.4f});
  b.initializer("thr", {1}, {0.2f});
  b.node("NonMaxSuppression", {"boxes", "scores", "max", "iou", "thr"}, {"sel"},
         "nms");
  b.output("sel", {k, 3}, onnx::TensorProto::INT64);
  return b;
}

} // namespace

TEST(ConformanceOps, NonMaxSuppressionAtRunTimeMatchesTheConstantForm) {
  // Unit boxes along x in corner order y1, x1, y2, x2 (box 2 flipped).
  Tensor boxes = makeTensor({1, 6, 4}, {0, 0,    1, 1,    0, 0.35f, 1, 1.35f,
                                        1, 2.5f, 0, 1.5f, 0, 0.7f,  1, 1.7f,
                                        0, 5,    1, 6,    0, 5.35f, 1, 6.35f});
  Tensor scores = makeTensor({1, 2, 6}, {0.95f, 0.9f, 0.7f, 0.8f, 0.5f, 0.6f,
                                         0.3f, 0.3f, 0.1f, 0.3f, 0.9f, 0.85f});
  // The ONNX rules by hand. Class 0 in score order 0, 1, 3, 2, 5, 4: a
  // chain: 0 kept, 1 suppressed by 0 (IoU 0.48), 3 kept (IoU 0.18 with 0;
  // 1, which would suppress it, is gone), max 2 reached. Class 1 (box 2
  // below the score threshold): 4 kept, 5 suppressed (IoU 0.48), then 0
  // (ties 0, 1, 3 by index) kept.
  Tensor want = int64Tensor({4, 3}, {0, 0, 0, 0, 0, 3, 0, 1, 4, 0, 1, 0});
  {
    Module M;
    auto F =
        importONNXBuffer(nmsModel(false, boxes, scores, 4).serialize(), "m", M);
    ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
    auto outs = compileAndRun(M, **F, "Interpreter", {});
    ASSERT_EQ(outs.size(), 1u);
    expectNear(outs[0], want, 0);
  }
  auto b = nmsModel(true, boxes, scores, 4);
  for (const std::string &backend : testBackends()) {
    SCOPED_TRACE(backend);
    auto outs =
        importAndRun(b, backend, tensors(boxes.clone(), scores.clone()));
    ASSERT_EQ(outs.size(), 1u);
    expectNear(outs[0], want, 0);
  }
  // Scores that select 3 boxes: the call fails before the run.
  Tensor low = scores.clone();
  for (dim_t i = 6; i < 12; ++i)
    low.getHandle<float>().raw(i) = 0.1f;
  Module M;
  auto F = importONNXBuffer(b.serialize(), "m", M);
  ASSERT_TRUE(bool(F));
  registerAllBackends();
  auto net = compileFunction(**F, *llvm::cantFail(getBackend("CPU")),
                             CompileOptions());
  ASSERT_TRUE(bool(net)) << llvm::toString(net.takeError());
  Bindings bind;
  auto phs = M.getInputPlaceholders();
  bind.insert(phs[0], boxes.clone());
  bind.insert(phs[1], std::move(low));
  llvm::Error err = net->function->run(bind);
  ASSERT_TRUE(bool(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("node 'nms'"),
            std::string::npos);
}

TEST(ConformanceOps, UniqueAtRunTimeMatchesTheConstantForm) {
  // Rows of x [4, 2] along axis 0: rows 0 and 2 equal; sorted order
  // (lexicographic) is row 3 [1, 0], row 1 [1, 5], row 0 [2, 1].
  Tensor x = makeTensor({4, 2}, {2, 1, 1, 5, 2, 1, 1, 0});
  for (int sorted : {0, 1}) {
    Tensor wantY = sorted ? makeTensor({3, 2}, {1, 0, 1, 5, 2, 1})
                          : makeTensor({3, 2}, {2, 1, 1, 5, 1, 0});
    Tensor wantIdx =
        sorted ? int64Tensor({3}, {3, 1, 0}) : int64Tensor({3}, {0, 1, 3});
    Tensor wantInv = sorted ? int64Tensor({4}, {2, 1, 2, 0})
                            : int64Tensor({4}, {0, 1, 0, 2});
    Tensor wantCnt =
        sorted ? int64Tensor({3}, {1, 1, 2}) : int64Tensor({3}, {2, 1, 1});
    for (bool runtime : {false, true}) {
      ONNXBuilder b(11);
      if (runtime)
        b.input("x", {4, 2});
      else
        b.initializer("x", {4, 2}, {2, 1, 1, 5, 2, 1, 1, 0});
      auto &n = b.node("Unique", {"x"}, {"y", "i", "v", "c"}, "u");
      ONNXBuilder::attrInt(n, "axis", 0);
      ONNXBuilder::attrInt(n, "sorted", sorted);
      b.output("y", {3, 2});
      b.output("i", {3}, onnx::TensorProto::INT64);
      b.output("v", {4}, onnx::TensorProto::INT64);
      b.output("c", {3}, onnx::TensorProto::INT64);
      for (const std::string &backend : testBackends()) {
        SCOPED_TRACE(backend + (runtime ? " run-time" : " constant") +
                     " sorted=" + std::to_string(sorted));
        auto outs = importAndRun(
            b, backend, runtime ? tensors(x.clone()) : std::vector<Tensor>());
        ASSERT_EQ(outs.size(), 4u);
        expectNear(outs[0], wantY, 0);
        expectNear(outs[1], wantIdx, 0);
        expectNear(outs[2], wantInv, 0);
        expectNear(outs[3], wantCnt, 0);
      }
    }
  }
  // Four distinct rows where three were compiled for: the call fails.
  ONNXBuilder b(11);
  b.input("x", {4, 2});
  auto &n = b.node("Unique", {"x"}, {"y"}, "u");
  ONNXBuilder::attrInt(n, "axis", 0);
  b.output("y", {3, 2});
  Module M;
  auto F = importONNXBuffer(b.serialize(), "m", M);
  ASSERT_TRUE(bool(F)) << llvm::toString(F.takeError());
  registerAllBackends();
  auto net = compileFunction(**F, *llvm::cantFail(getBackend("Interpreter")),
                             CompileOptions());
  ASSERT_TRUE(bool(net)) << llvm::toString(net.takeError());
  Bindings bind;
  bind.insert(M.getInputPlaceholders()[0],
              makeTensor({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
  llvm::Error err = net->function->run(bind);
  ASSERT_TRUE(bool(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("node 'u'"), std::string::npos);
}
