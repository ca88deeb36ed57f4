//===- Progress.cpp - Stage notifications of a long compile ---------------===//
#include "ember/Base/Progress.h"

#include <mutex>

using namespace ember;

namespace {
std::mutex &listenerMutex() {
  static std::mutex m;
  return m;
}
StageListener &listener() {
  static StageListener l;
  return l;
}
thread_local int muteDepth = 0;
} // namespace

StageListener ember::setStageListener(StageListener l) {
  std::lock_guard<std::mutex> lock(listenerMutex());
  std::swap(listener(), l);
  return l;
}

ember::StageNotesMuted::StageNotesMuted() { ++muteDepth; }
ember::StageNotesMuted::~StageNotesMuted() { --muteDepth; }

void ember::noteStageDone(llvm::StringRef stage) {
  if (muteDepth)
    return;
  StageListener l;
  {
    std::lock_guard<std::mutex> lock(listenerMutex());
    l = listener();
  }
  if (l)
    l(stage);
}
