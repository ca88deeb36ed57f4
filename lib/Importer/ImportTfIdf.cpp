//===- ImportTfIdf.cpp - TfIdfVectorizer over integer n-grams -------------===//
//
// TfIdfVectorizer counts, per row of X, how often each n-gram of its pool
// occurs with each allowed skip, then weights the counts. Composed from
// existing nodes, all shapes static: for one n-gram size n and skip
// distance d, the n strided slices X[:, k d : k d + P] (P start positions)
// are compared with the pool's k-th items, the matches of all n items are
// and-ed and summed over the positions, and a constant 0/1 matrix maps
// each pool n-gram to its output column (several n-grams may share one).
// The counting rules are ONNX's reference implementation's: n-gram sizes
// from min_gram_length to max_gram_length, unigrams counted once (skip
// distance 1 only), a repeated pool n-gram counts for its last entry,
// and IDF/TFIDF weights indexed by output column.
//
//===----------------------------------------------------------------------===//
#include "ImportHelpers.h"

#include <map>

using namespace ember;
using namespace ember::onnximport;

#define TRY EMBER_ASSIGN_OR_RETURN

namespace {

/// The attributes of one TfIdfVectorizer node, checked.
struct TfIdfSpec {
  int64_t minGram = 0, maxGram = 0, maxSkip = 0;
  std::string mode;
  Ints pool, counts, indexes;
  std::vector<float> weights;
  int64_t outputs = 0; // max(ngram_indexes) + 1
};

/// The pool's n-grams of size n, each with the pool entry (in pool order,
/// counting every size) whose ngram_indexes value gives its column.
using NgramTable = std::map<Ints, int64_t>;

llvm::Expected<TfIdfSpec> readSpec(const onnx::NodeProto &node) {
  AttrReader attrs(node);
  TfIdfSpec s;
  TRY(s.minGram, attrs.getInt("min_gram_length", std::nullopt));
  TRY(s.maxGram, attrs.getInt("max_gram_length", std::nullopt));
  TRY(s.maxSkip, attrs.getInt("max_skip_count", std::nullopt));
  TRY(s.mode, attrs.getString("mode", std::nullopt));
  TRY(s.counts, attrs.getInts("ngram_counts", std::nullopt));
  TRY(s.indexes, attrs.getInts("ngram_indexes", std::nullopt));
  if (attrs.has("pool_strings"))
    return fail(node, "string n-gram pools (pool_strings) are not supported: "
                      "Ember has no string tensors");
  TRY(s.pool, attrs.getInts("pool_int64s", std::nullopt));
  if (const onnx::AttributeProto *w = attrs.find("weights"))
    s.weights.assign(w->floats().begin(), w->floats().end());
  if (s.mode != "TF" && s.mode != "IDF" && s.mode != "TFIDF")
    return fail(node, "mode must be TF, IDF or TFIDF, not '" + s.mode + "'");
  if (s.minGram < 1 || s.maxGram < s.minGram || s.maxSkip < 0 ||
      s.maxGram > kMaxUnrolledSteps || s.maxSkip > kMaxUnrolledSteps)
    return fail(node, "needs 1 <= min_gram_length <= max_gram_length and "
                      "max_skip_count >= 0 (at most 4096 each)");
  if (s.counts.empty() || s.indexes.empty())
    return fail(node, "ngram_counts and ngram_indexes must not be empty");
  for (size_t i = 0; i < s.counts.size(); ++i)
    if (s.counts[i] < 0 || s.counts[i] > int64_t(s.pool.size()) ||
        (i && s.counts[i] < s.counts[i - 1]))
      return fail(node, "ngram_counts must be non-decreasing offsets into "
                        "the pool");
  for (int64_t v : s.indexes) {
    if (v < 0 || v >= kMaxFoldElements)
      return fail(node, "ngram_indexes values must be in [0, 2^24)");
    s.outputs = std::max(s.outputs, v + 1);
  }
  if (!s.weights.empty() && int64_t(s.weights.size()) < s.outputs)
    return fail(node, "weights holds " + llvm::Twine(s.weights.size()) +
                          " values, fewer than the " + llvm::Twine(s.outputs) +
                          " output columns");
  return s;
}

/// The pool's n-grams of size \p n (a size outside [min, max] has none).
llvm::Expected<NgramTable> ngramsOfSize(const onnx::NodeProto &node,
                                        const TfIdfSpec &s, int64_t n) {
  NgramTable table;
  int64_t entry = 0; // pool n-grams before size n's, all sizes counted
  for (size_t i = 0; i < s.counts.size(); ++i) {
    int64_t begin = s.counts[i];
    int64_t end = i + 1 < s.counts.size() ? s.counts[i + 1] : s.pool.size();
    int64_t size = int64_t(i) + 1;
    if ((end - begin) % size)
      return fail(node, "the pool's " + llvm::Twine(size) + "-grams hold " +
                            llvm::Twine(end - begin) +
                            " items, not a multiple of " + llvm::Twine(size));
    int64_t grams = (end - begin) / size;
    if (size == n)
      for (int64_t g = 0; g < grams; ++g) {
        if (entry + g >= int64_t(s.indexes.size()))
          return fail(node, "ngram_indexes has fewer entries than the pool "
                            "has n-grams");
        auto first = s.pool.begin() + begin + g * size;
        table[Ints(first, first + size)] = entry + g;
      }
    entry += grams;
  }
  return table;
}

/// How often each n-gram of \p table occurs in the rows of \p x [B, C]
/// with skip distance \p d, as float [B, G] (G = table size), or null
/// when no n-gram fits in a row.
llvm::Expected<NodeValue> countMatches(ImportContext &ctx,
                                       const onnx::NodeProto &node, NodeValue x,
                                       const NgramTable &table, int64_t n,
                                       int64_t d) {
  int64_t b = x.dims()[0], c = x.dims()[1], g = table.size();
  int64_t positions = c - (n - 1) * d;
  if (positions <= 0)
    return NodeValue();
  NodeValue match;
  for (int64_t k = 0; k < n; ++k) {
    Ints items;
    for (const auto &[gram, entry] : table)
      items.push_back(gram[k]);
    NodeValue item = int64Constant(ctx, node, "pool", {1, 1, g}, items);
    TRY(NodeValue at,
        sliceNode(ctx, node, x, {0, k * d}, {1, 1}, {b, positions}));
    TRY(at, reshapeTo(ctx, node, at, {b, positions, 1}));
    TRY(NodeValue eq, binary(ctx, node, OpKind::Equal, at, item));
    if (match) {
      TRY(match, binary(ctx, node, OpKind::And, match, eq));
    } else {
      match = eq;
    }
  }
  TRY(NodeValue hits, castTo(ctx, node, match, ElemKind::Float32));
  return reduce(ctx, node, OpKind::ReduceSum, hits, {1}, false);
}

/// The float [G, D] matrix mapping n-gram i of \p table to its column.
NodeValue columnMap(ImportContext &ctx, const onnx::NodeProto &node,
                    const TfIdfSpec &s, const NgramTable &table) {
  Tensor m(ElemKind::Float32, {dim_t(table.size()), dim_t(s.outputs)});
  int64_t row = 0;
  for (const auto &[gram, entry] : table)
    m.getHandle<float>().at({dim_t(row++), dim_t(s.indexes[entry])}) = 1.f;
  return ctx.module().createConstant(nameOf(node) + ".columns", std::move(m));
}

/// The counts weighted as \p s's mode says.
llvm::Expected<NodeValue> weigh(ImportContext &ctx, const onnx::NodeProto &node,
                                const TfIdfSpec &s, NodeValue tf) {
  if (s.mode == "TF" || (s.mode == "TFIDF" && s.weights.empty()))
    return tf;
  NodeValue w;
  if (!s.weights.empty()) {
    Tensor t(ElemKind::Float32, {dim_t(s.outputs)});
    for (int64_t i = 0; i < s.outputs; ++i)
      t.getHandle<float>().raw(i) = s.weights[i];
    w = ctx.module().createConstant(nameOf(node) + ".weights", std::move(t));
  }
  if (s.mode == "TFIDF")
    return binary(ctx, node, OpKind::Mul, tf, w);
  TRY(NodeValue seen,
      binary(ctx, node, OpKind::Greater, tf, constantLike(ctx, node, tf, 0)));
  if (!w)
    return castTo(ctx, node, seen, ElemKind::Float32);
  TRY(NodeValue wb, ctx.broadcastTo(node, w, seen.dims()));
  return make(
      ctx, node, OpKind::Where,
      {seen, wb, constantOf(ctx, node, ElemKind::Float32, seen.dims(), 0)});
}

llvm::Error importTfIdfVectorizer(ImportContext &ctx,
                                  const onnx::NodeProto &node) {
  TRY(TfIdfSpec s, readSpec(node));
  TRY(NodeValue x, ctx.input(node, 0));
  ElemKind k = x.getElemKind();
  if (k != ElemKind::Int32 && k != ElemKind::Int64)
    return fail(node, "X must be int32 or int64");
  size_t rank = x.dims().size();
  if (rank > 2)
    return fail(node, "X must have shape [C] or [B, C]");
  int64_t b = rank == 2 ? x.dims()[0] : 1;
  int64_t c = rank == 0 ? 1 : x.dims()[rank - 1];
  TRY(x, castTo(ctx, node, x, ElemKind::Int64));
  TRY(x, reshapeTo(ctx, node, x, {b, c}));
  NodeValue tf = constantOf(ctx, node, ElemKind::Float32, {b, s.outputs}, 0);
  for (int64_t n = s.minGram; n <= s.maxGram; ++n) {
    TRY(NgramTable table, ngramsOfSize(node, s, n));
    if (table.empty())
      continue;
    NodeValue columns = columnMap(ctx, node, s, table);
    // Unigrams do not depend on the skip: counted at distance 1 only.
    for (int64_t d = 1; d <= (n == 1 ? 1 : s.maxSkip + 1); ++d) {
      TRY(NodeValue hits, countMatches(ctx, node, x, table, n, d));
      if (!hits)
        break;
      TRY(hits, plainMatMul(ctx, node, hits, columns));
      TRY(tf, binary(ctx, node, OpKind::Add, tf, hits));
    }
  }
  TRY(NodeValue y, weigh(ctx, node, s, tf));
  if (rank < 2) {
    TRY(y, reshapeTo(ctx, node, y, {s.outputs}));
  }
  return ctx.setOutput(node, y);
}

const ImportRule kTfIdfRules[] = {
    {"TfIdfVectorizer", 9, 17, importTfIdfVectorizer},
};

} // namespace

RuleList onnximport::getTfIdfImportRules() { return kTfIdfRules; }
