//===- GroveOps.td - All grove ops -----------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVEOPS_TD
#define GROVE_DIALECT_GROVE_IR_GROVEOPS_TD

include "grove/Dialect/Grove/IR/GroveAttrs.td"
include "grove/Dialect/Grove/IR/GroveStateOps.td"
include "grove/Dialect/Grove/IR/GroveTensorOps.td"
include "grove/Dialect/Grove/IR/GroveMathOps.td"
include "grove/Dialect/Grove/IR/GroveNNOps.td"
include "grove/Dialect/Grove/IR/GroveTransformerOps.td"
include "grove/Dialect/Grove/IR/GroveTrainingOps.td"
include "grove/Dialect/Grove/IR/GroveTreeOps.td"
include "grove/Dialect/Grove/IR/GroveCollectiveOps.td"

#endif // GROVE_DIALECT_GROVE_IR_GROVEOPS_TD
