//===- NpyTest.cpp - The .npy header reader -------------------------------===//
//
// parseNpy reads the header dict by hand (no std::regex: it was compiled
// three times per file and recursed per character). These cover the
// header spellings numpy writes and the malformed ones it must refuse.
//
//===----------------------------------------------------------------------===//
#include "ember/Importer/TensorIO.h"

#include "gtest/gtest.h"

using namespace ember;

namespace {

/// A version 1.0 .npy file with \p header and \p payload bytes after it.
std::string npyFile(std::string header, size_t payload) {
  header.resize(118, ' ');
  header += '\n';
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += char(header.size() & 0xff);
  file += char(header.size() >> 8);
  return file + header + std::string(payload, '\0');
}

std::string parseError(const std::string &header, size_t payload = 64) {
  auto t = parseNpy(npyFile(header, payload), "t.npy");
  return t ? "" : llvm::toString(t.takeError());
}

} // namespace

TEST(Npy, HeaderSpellings) {
  struct Case {
    const char *header;
    ElemKind kind;
    std::vector<dim_t> dims;
  } cases[] = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
       ElemKind::Float32,
       {2, 3}},
      {"{'descr': '<i8', 'fortran_order': False, 'shape': (5,), }",
       ElemKind::Int64,
       {5}},
      {"{'descr': '|b1', 'fortran_order': False, 'shape': (), }",
       ElemKind::Bool,
       {}},
      {"{'shape':(1,2,2),'descr':'<i4','fortran_order':False}",
       ElemKind::Int32,
       {1, 2, 2}},
  };
  for (const Case &c : cases) {
    auto t = parseNpy(npyFile(c.header, 64), "t.npy");
    ASSERT_TRUE(bool(t)) << c.header << ": " << llvm::toString(t.takeError());
    EXPECT_EQ(t->tensor.getType().getElemKind(), c.kind) << c.header;
    EXPECT_EQ(std::vector<dim_t>(t->tensor.getType().dims().begin(),
                                 t->tensor.getType().dims().end()),
              c.dims)
        << c.header;
  }
}

TEST(Npy, MalformedHeaders) {
  struct Case {
    const char *header;
    const char *error;
  } cases[] = {
      {"{'fortran_order': False, 'shape': (2,), }", "unknown dtype"},
      {"{'descr': 'f4', 'shape': (2,), }", "unknown dtype"},
      {"{'descr': '>f4', 'shape': (2,), }", "unknown dtype"},
      {"{'descr': '<f8', 'shape': (2,), }", "dtype must be float32"},
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }",
       "Fortran order"},
      {"{'descr': '<f4', }", "no shape"},
      {"{'descr': '<f4', 'shape': (2, 3 }", "no shape"},
      {"{'descr': '<f4', 'shape': (2, x), }", "not a non-negative integer"},
      {"{'descr': '<f4', 'shape': (-2,), }", "not a non-negative integer"},
      {"{'descr': '<f4', 'shape': (,), }", "not a non-negative integer"},
      {"{'descr': '<f4', 'shape': (2,,), }", "not a non-negative integer"},
      {"{'descr': '<f4', 'shape': (99999999999999999999,), }",
       "does not fit in 64 bits"},
      {"{'descr': '<f4', 'shape': (100,), }", "data is shorter"},
  };
  for (const Case &c : cases) {
    std::string err = parseError(c.header);
    EXPECT_NE(err.find(c.error), std::string::npos)
        << c.header << " gave '" << err << "'";
  }
}
