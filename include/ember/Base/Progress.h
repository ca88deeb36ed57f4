//===- Progress.h - Stage notifications of a long compile ------*- C++ -*-===//
//
// A tool that compiles a large model reports each finished stage (import,
// optimize, IR, plan, lower, codegen, object) so that its user sees it moving.
// The stages happen deep inside the pipeline and the backends; like LLVM's
// -time-passes switch, the listener is process-wide, set once by the tool,
// so that no options struct of every stage has to carry it.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_BASE_PROGRESS_H
#define EMBER_BASE_PROGRESS_H

#include "llvm/ADT/StringRef.h"

#include <functional>

namespace ember {

/// Called with a stage's name when it finishes.
using StageListener = std::function<void(llvm::StringRef stage)>;

/// Installs \p listener (empty: none); returns the previous one.
StageListener setStageListener(StageListener listener);

/// Tells the listener, if any, that \p stage has finished, unless a
/// StageNotesMuted is alive on this thread.
void noteStageDone(llvm::StringRef stage);

/// Mutes stage notes on this thread while alive: compiles nested inside a
/// stage (constant folding through the Interpreter) are not stages of the
/// tool's compile.
class StageNotesMuted {
public:
  StageNotesMuted();
  ~StageNotesMuted();
  StageNotesMuted(const StageNotesMuted &) = delete;
  StageNotesMuted &operator=(const StageNotesMuted &) = delete;
};

} // namespace ember

#endif
