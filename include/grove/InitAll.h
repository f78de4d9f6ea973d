//===- InitAll.h - Register everything Grove provides -----------*- C++ -*-===//

#ifndef GROVE_INITALL_H
#define GROVE_INITALL_H

#include "grove/Codegen/Passes.h"
#include "grove/Conversion/Passes.h"
#include "grove/Conversion/ServiceBufferization.h"
#include "grove/Dialect/Grove/IR/GroveDialect.h"
#include "grove/Dialect/Grove/Transforms/BufferizableOpInterfaceImpl.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"
#include "grove/Dialect/Linalg/Transforms/Passes.h"
#include "grove/Pipelines/Pipelines.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/IR/DialectRegistry.h"

namespace mlir::grove {

inline void registerAllGroveDialects(DialectRegistry &registry) {
  registry.insert<GroveDialect>();
  registerBufferizableOpInterfaceExternalModels(registry);
  registerServiceBufferizationExternalModels(registry);
  // grove-params-to-arguments inlines func.calls of state writers.
  func::registerInlinerExtension(registry);
}

/// Every grove pass and named pipeline.
inline void registerAllGrovePasses() {
  registerGroveTransformsPasses();
  registerGroveLinalgTransformsPasses();
  registerGroveConversionPasses();
  registerGroveCodegenPasses();
  registerGrovePipelines();
}

} // namespace mlir::grove

#endif // GROVE_INITALL_H
