//===- BufferizableOpInterfaceImpl.h - grove ops in bufferization -*- C++
//-*-===//
//
// External BufferizableOpInterface models for the grove ops that survive the
// lowering to linalg and are bufferized by one-shot bufferization itself
// (today grove.assign, the in-place state write).
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define GROVE_DIALECT_GROVE_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;

namespace grove {
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace grove
} // namespace mlir

#endif // GROVE_DIALECT_GROVE_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
