//===- InputList.cpp - Which images to classify, and their labels ---------===//
#include "InputList.h"

#include "ember/Base/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>

namespace ember {

/// Appends the non-blank, non-comment lines of \p text to \p out.
static void appendLines(llvm::StringRef text, std::vector<std::string> &out) {
  llvm::SmallVector<llvm::StringRef, 64> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (!line.empty() && !line.starts_with("#"))
      out.push_back(line.str());
  }
}

static bool isImageName(llvm::StringRef path) {
  std::string ext = llvm::sys::path::extension(path).lower();
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

static llvm::Error appendDirectory(llvm::StringRef dir,
                                   std::vector<std::string> &out) {
  if (!llvm::sys::fs::is_directory(dir))
    return makeErrorF("-input-image-dir '{0}' is not a directory", dir);
  std::vector<std::string> found;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (isImageName(it->path()) && !llvm::sys::fs::is_directory(it->path()))
      found.push_back(it->path());
  if (ec)
    return makeErrorF("cannot list '{0}': {1}", dir, ec.message());
  std::sort(found.begin(), found.end());
  out.insert(out.end(), found.begin(), found.end());
  return llvm::Error::success();
}

llvm::Expected<std::vector<std::string>>
collectImagePaths(const InputSources &sources) {
  std::vector<std::string> paths;
  for (const std::string &arg : sources.args) {
    if (arg != "-") {
      paths.push_back(arg);
      continue;
    }
    std::string text((std::istreambuf_iterator<char>(*sources.stdinStream)),
                     std::istreambuf_iterator<char>());
    appendLines(text, paths);
  }
  if (!sources.dir.empty())
    EMBER_RETURN_IF_ERR(appendDirectory(sources.dir, paths));
  if (!sources.listFile.empty()) {
    auto buf = llvm::MemoryBuffer::getFile(sources.listFile, /*IsText=*/true);
    if (!buf)
      return makeErrorF("cannot read -input-image-list-file '{0}': {1}",
                        sources.listFile, buf.getError().message());
    appendLines((*buf)->getBuffer(), paths);
  }
  if (paths.empty())
    return makeError("no images given (pass files, '-', -input-image-dir "
                     "or -input-image-list-file)");
  return paths;
}

llvm::Expected<std::vector<std::string>> readLabels(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf)
    return makeErrorF("cannot read -labels '{0}': {1}", path,
                      buf.getError().message());
  llvm::StringRef text = (*buf)->getBuffer();
  if (text.ends_with("\n"))
    text = text.drop_back();
  llvm::SmallVector<llvm::StringRef, 16> lines;
  text.split(lines, '\n');
  std::vector<std::string> labels;
  for (llvm::StringRef line : lines)
    labels.push_back(line.rtrim("\r").str());
  return labels;
}

llvm::Expected<std::vector<unsigned>> parseIndexList(llvm::StringRef text,
                                                     llvm::StringRef flag) {
  llvm::SmallVector<llvm::StringRef, 16> parts;
  text.split(parts, ',');
  std::vector<unsigned> result;
  for (llvm::StringRef p : parts) {
    unsigned v;
    if (p.trim().getAsInteger(10, v))
      return makeErrorF("{0}: '{1}' is not a non-negative integer", flag, p);
    result.push_back(v);
  }
  return result;
}

llvm::Expected<std::vector<float>> parseFloatList(llvm::StringRef text,
                                                  llvm::StringRef flag) {
  llvm::SmallVector<llvm::StringRef, 4> parts;
  text.split(parts, ',');
  std::vector<float> result;
  for (llvm::StringRef p : parts) {
    double v;
    if (p.trim().getAsDouble(v))
      return makeErrorF("{0}: '{1}' is not a number", flag, p);
    result.push_back(float(v));
  }
  return result;
}

} // namespace ember
