//===- Error.cpp ----------------------------------------------------------===//
#include "ember/Base/Error.h"

std::string ember::errorToString(llvm::Error err) {
  return llvm::toString(std::move(err));
}
