//===- ServiceBufferization.h - grove ops bufferized to calls ---*- C++ -*-===//
//
// External BufferizableOpInterface models of the grove ops that bufferize
// into runtime service calls (lib/Conversion/GroveToRuntime).
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_CONVERSION_SERVICEBUFFERIZATION_H
#define GROVE_CONVERSION_SERVICEBUFFERIZATION_H

namespace mlir {
class DialectRegistry;
namespace grove {
void registerServiceBufferizationExternalModels(DialectRegistry &registry);
} // namespace grove
} // namespace mlir

#endif // GROVE_CONVERSION_SERVICEBUFFERIZATION_H
