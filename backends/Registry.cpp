//===- Registry.cpp - The backends built into this binary -----------------===//
#include "ember/Backend/Backend.h"

#include "CPU/CPU.h"
#include "Interpreter/Interpreter.h"
#ifdef EMBER_WITH_CUDA
#include "CUDA/CUDA.h"
#endif

void ember::registerAllBackends() {
  registerBackend(std::make_unique<InterpreterBackend>());
  registerBackend(std::make_unique<CPUBackend>());
#ifdef EMBER_WITH_CUDA
  registerBackend(std::make_unique<CUDABackend>());
#endif
}
