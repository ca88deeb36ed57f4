//===- Registry.cpp - The backends built into this binary -----------------===//
#include "ember/Backend/Backend.h"

#include "CPU/CPU.h"
#include "Interpreter/Interpreter.h"

void ember::registerAllBackends() {
  registerBackend(std::make_unique<InterpreterBackend>());
  registerBackend(std::make_unique<CPUBackend>());
}
