//===- GroveDialect.cpp - Grove dialect registration ----------------------===//

#include "grove/Dialect/Grove/IR/GroveDialect.h"
#include "grove/Dialect/Grove/IR/ABIAttrs.h"
#include "grove/Dialect/Grove/IR/GroveAttrs.h"
#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Transforms/InliningUtils.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::grove;

#include "grove/Dialect/Grove/IR/GroveOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "grove/Dialect/Grove/IR/GroveOpsTypes.cpp.inc"

#include "grove/Dialect/Grove/IR/GroveInterfaces.cpp.inc"

namespace {
/// Every grove op may be inlined: they have value semantics, and state
/// ops name module symbols, which inlining within the module keeps valid.
struct GroveInlinerInterface : DialectInlinerInterface {
  using DialectInlinerInterface::DialectInlinerInterface;
  bool isLegalToInline(Operation *, Region *, bool, IRMapping &) const final {
    return true;
  }
  bool isLegalToInline(Region *, Region *, bool, IRMapping &) const final {
    return true;
  }
};
} // namespace

void GroveDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "grove/Dialect/Grove/IR/GroveOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "grove/Dialect/Grove/IR/GroveOpsTypes.cpp.inc"
      >();
  registerAttributes();
  addInterfaces<GroveInlinerInterface>();
}

LogicalResult GroveDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto expect = [&](bool ok, StringRef what) -> LogicalResult {
    if (ok)
      return success();
    return op->emitError("'")
           << name << "' must be " << what << ", got " << attr.getValue();
  };
  if (name == kModelAttr)
    return expect(isa<ModuleOp>(op) && isa<ABIModelAttr>(attr.getValue()),
                  "a #grove.abi_model on a module");
  if (name == kModuleNameAttr)
    return expect(isa<ModuleOp>(op) && isa<StringAttr>(attr.getValue()),
                  "a string on a module");
  if (name == kEntryNameAttr)
    return expect(isa<StringAttr>(attr.getValue()), "a string");
  if (name == kCollectivesConfigAttr)
    return expect(isa<func::FuncOp>(op) && isa<StringAttr>(attr.getValue()),
                  "a string on a function");
  if (name == kEntryIndexAttr || name == kEntryInputsAttr ||
      name == kParallelBodyAttr)
    return expect(isa<IntegerAttr>(attr.getValue()), "an integer");
  if (name == kEntryCalledAttr)
    return expect(isa<UnitAttr>(attr.getValue()), "a unit attribute");
  if (name == kEqualDimsAttr) {
    auto quads = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    return expect(
        quads && quads.size() % 4 == 0 &&
            llvm::all_of(quads.asArrayRef(), [](int64_t v) { return v >= 0; }),
        "quadruples (input, dim, earlier input, dim) of "
        "non-negative indices");
  }
  if (name == kNoAliasArgsAttr)
    return expect(isa<DenseI64ArrayAttr>(attr.getValue()),
                  "an array of argument indices");
  if (name == kAutocastAttr)
    return expect(isa<ModuleOp, func::FuncOp>(op) &&
                      isa<AutocastAttr>(attr.getValue()),
                  "a #grove.autocast on a module or function");
  if (name == kLossScaleUpdateAttr)
    return expect(isa<SetParamOp>(op) && isa<UnitAttr>(attr.getValue()),
                  "a unit attribute on grove.set_param");
  if (name == kMemRefSignatureAttr) {
    auto type = dyn_cast<TypeAttr>(attr.getValue());
    return expect(type && isa<FunctionType>(type.getValue()),
                  "a function type");
  }
  return op->emitError("unknown grove attribute '") << name << "'";
}

/// Checks a `grove.state` argument against the module's grove.param.
static LogicalResult verifyStateArg(Operation *op, unsigned argIndex,
                                    Attribute value) {
  auto ref = dyn_cast<FlatSymbolRefAttr>(value);
  if (!ref)
    return op->emitError("'") << kStateArgAttr << "' of argument " << argIndex
                              << " must name a grove.param, got " << value;
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return op->emitError("'")
           << kStateArgAttr << "' belongs on a function argument";
  auto param = SymbolTable::lookupNearestSymbolFrom<ParamOp>(op, ref);
  // grove-prepare-abi consumes the params once the descriptor holds them.
  if (!param)
    return success();
  Type argType = func.getArgumentTypes()[argIndex];
  if (isa<TensorType>(argType) && argType != param.getType())
    return op->emitError("argument ")
           << argIndex << " has type " << argType << " but " << ref << " is "
           << param.getType();
  return success();
}

LogicalResult GroveDialect::verifyRegionArgAttribute(Operation *op,
                                                     unsigned regionIndex,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kArgNameAttr) {
    if (!isa<StringAttr>(attr.getValue()))
      return op->emitError(name)
             << " of argument " << argIndex << " must be a string, got "
             << attr.getValue();
    return success();
  }
  if (name == kStateArgAttr)
    return verifyStateArg(op, argIndex, attr.getValue());
  if (name == kBelowAttr) {
    auto bound = dyn_cast<IntegerAttr>(attr.getValue());
    auto func = dyn_cast<FunctionOpInterface>(op);
    // grove-prepare-abi moves the bound into the descriptor; until then
    // the argument is a tensor.
    auto type = func ? dyn_cast<ShapedType>(func.getArgumentTypes()[argIndex])
                     : ShapedType();
    if (!bound || bound.getInt() < 1 || !type ||
        !type.getElementType().isSignlessInteger() ||
        type.getElementType().isInteger(1))
      return op->emitError("'")
             << name << "' bounds an integer tensor argument by an integer "
             << ">= 1, not argument " << argIndex << " with "
             << attr.getValue();
    return success();
  }
  if (name == kForestAttr || name == kForestNodesAttr) {
    auto func = dyn_cast<FunctionOpInterface>(op);
    auto type =
        func ? dyn_cast<RankedTensorType>(func.getArgumentTypes()[argIndex])
             : RankedTensorType();
    auto forest = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
    auto nodes = dyn_cast<IntegerAttr>(attr.getValue());
    bool ok = name == kForestAttr
                  ? forest && forest.size() == 3 && forest[0] >= 0 &&
                        forest[1] >= 0 && forest[2] >= 0 && type &&
                        type.getRank() == 1 &&
                        type.getElementType().isInteger(32)
                  : nodes && nodes.getInt() >= 0 && type && type.getRank() >= 1;
    if (!ok)
      return op->emitError("'")
             << name << "' on argument " << argIndex
             << (name == kForestAttr
                     ? " needs [children, roots, arity] (input indices, an "
                       "arity >= 0) on an i32 vector"
                     : " needs the index of the forest's offsets input")
             << ", got " << attr.getValue();
    return success();
  }
  if (name == kWritesAttr) {
    auto func = dyn_cast<FunctionOpInterface>(op);
    if (!isa<UnitAttr>(attr.getValue()) || !func ||
        !func.getArgAttr(argIndex, kStateArgAttr))
      return op->emitError("'")
             << name << "' marks a grove.state argument (unit), not argument "
             << argIndex;
    return success();
  }
  return op->emitError("unknown grove argument attribute '") << name << "'";
}

LogicalResult GroveDialect::verifyRegionResultAttribute(Operation *op,
                                                        unsigned regionIndex,
                                                        unsigned resultIndex,
                                                        NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name != kArgNameAttr)
    return op->emitError("unknown grove result attribute '") << name << "'";
  if (!isa<StringAttr>(attr.getValue()))
    return op->emitError(name) << " of result " << resultIndex
                               << " must be a string, got " << attr.getValue();
  return success();
}

Operation *GroveDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}
