//===- GroveAttrs.cpp - The model descriptor as attributes ----------------===//
//
// Each attribute converts to its struct of grove/ModelSchema.h and back; the
// model's verifier is the schema's validateModel (which applies every limit
// the reader does), so the IR holds no descriptor the runtime would refuse.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::grove;
namespace schema = ::grove::schema;

#include "grove/Dialect/Grove/IR/GroveAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "grove/Dialect/Grove/IR/GroveOpsAttrs.cpp.inc"

void GroveDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "grove/Dialect/Grove/IR/GroveOpsAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Policies
//===----------------------------------------------------------------------===//

LogicalResult AutocastAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   FloatType compute, int64_t lossScale,
                                   int64_t growthInterval) {
  if (!compute.isBF16() && !compute.isF16())
    return emitError() << "autocast computes in bf16 or f16, not " << compute;
  if (lossScale < -1)
    return emitError() << "loss_scale must be -1 (by compute type), 0 "
                          "(none) or positive, got "
                       << lossScale;
  if (growthInterval < 1)
    return emitError() << "growth_interval must be at least 1, got "
                       << growthInterval;
  return success();
}

//===----------------------------------------------------------------------===//
// Preconditions
//===----------------------------------------------------------------------===//

schema::Precondition BelowAttr::toSchema() const {
  return schema::BoundPrecondition{getBound()};
}
schema::Precondition EqualDimAttr::toSchema() const {
  return schema::EqualDimPrecondition{getDim(), getInput(), getInputDim()};
}
schema::Precondition ForestAttr::toSchema() const {
  return schema::ForestPrecondition{getChildren(), getRoots(), getArity()};
}
schema::Precondition ForestNodesAttr::toSchema() const {
  return schema::ForestNodesPrecondition{getOffsets()};
}

namespace {
struct PreconditionBuilder {
  MLIRContext *ctx;
  PreconditionAttrInterface operator()(const schema::BoundPrecondition &p) {
    return BelowAttr::get(ctx, p.bound);
  }
  PreconditionAttrInterface operator()(const schema::EqualDimPrecondition &p) {
    return EqualDimAttr::get(ctx, p.dim, p.input, p.inputDim);
  }
  PreconditionAttrInterface operator()(const schema::ForestPrecondition &p) {
    return ForestAttr::get(ctx, p.children, p.roots, p.arity);
  }
  PreconditionAttrInterface
  operator()(const schema::ForestNodesPrecondition &p) {
    return ForestNodesAttr::get(ctx, p.offsets);
  }
};
} // namespace

PreconditionAttrInterface
mlir::grove::preconditionToAttr(MLIRContext *ctx,
                                const schema::Precondition &p) {
  return std::visit(PreconditionBuilder{ctx}, p);
}

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

std::optional<DLDataType> mlir::grove::toDLDataType(Type t) {
  auto make = [](uint8_t code, uint8_t bits) {
    return DLDataType{code, bits, 1};
  };
  if (t.isF32() || t.isF16() || t.isF64())
    return make(kDLFloat, t.getIntOrFloatBitWidth());
  if (t.isBF16())
    return make(kDLBfloat, 16);
  if (t.isSignlessInteger(1))
    return make(schema::kDLBoolCode, 8);
  for (unsigned w : {8u, 16u, 32u, 64u})
    if (t.isSignlessInteger(w))
      return make(kDLInt, w);
  return std::nullopt;
}

Type mlir::grove::fromDLDataType(MLIRContext *ctx, DLDataType type) {
  Builder b(ctx);
  switch (type.code) {
  case kDLFloat:
    return type.bits == 16   ? b.getF16Type()
           : type.bits == 64 ? b.getF64Type()
                             : b.getF32Type();
  case kDLBfloat:
    return b.getBF16Type();
  case schema::kDLBoolCode:
    return b.getI1Type();
  default:
    return b.getIntegerType(type.bits);
  }
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

namespace {
using EmitFn = function_ref<InFlightDiagnostic()>;

template <typename T> std::string str(T value) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << value;
  return out;
}

/// Reports through `emitError` where there is one (verifiers), silently
/// otherwise (a caller that verified already).
LogicalResult failWith(EmitFn emitError, const Twine &message) {
  if (emitError)
    emitError() << message;
  return failure();
}

LogicalResult tensorFields(EmitFn emitError, StringAttr name,
                           RankedTensorType type, schema::TensorDesc &out) {
  std::optional<DLDataType> dtype = toDLDataType(type.getElementType());
  if (!dtype)
    return failWith(emitError, "'" + name.getValue() + "' has element type " +
                                   str(type.getElementType()) +
                                   ", which cannot cross the ABI");
  out.name = name.str();
  out.dtype = *dtype;
  for (int64_t d : type.getShape())
    out.shape.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return success();
}

LogicalResult tensorDesc(EmitFn emitError, ABITensorAttr attr,
                         schema::TensorDesc &out) {
  if (failed(tensorFields(emitError, attr.getName(), attr.getType(), out)))
    return failure();
  if (ArrayAttr list = attr.getPreconditions())
    for (Attribute p : list) {
      auto pre = dyn_cast<PreconditionAttrInterface>(p);
      if (!pre)
        return failWith(emitError, "input '" + attr.getName().getValue() +
                                       "' lists " + str(p) +
                                       ", which is no precondition");
      out.preconditions.push_back(pre.toSchema());
    }
  return success();
}

LogicalResult entryDesc(EmitFn emitError, Attribute attr,
                        const llvm::StringMap<size_t> &stateIndex,
                        schema::EntryDesc &out) {
  auto entry = dyn_cast<ABIEntryAttr>(attr);
  if (!entry)
    return failWith(emitError, "'entries' holds " + str(attr) +
                                   ", which is no #grove.abi_entry");
  out.name = entry.getName().str();
  for (Attribute a : entry.getArgs()) {
    if (auto input = dyn_cast<ABITensorAttr>(a)) {
      out.args.push_back({false, out.inputs.size(), schema::Access::Read});
      out.inputs.emplace_back();
      if (failed(tensorDesc(emitError, input, out.inputs.back())))
        return failure();
      continue;
    }
    auto state = dyn_cast<ABIStateArgAttr>(a);
    if (!state)
      return failWith(emitError, "entry '" + out.name + "' has argument " +
                                     str(a) +
                                     ", which is no #grove.abi_tensor or "
                                     "#grove.abi_state_arg");
    auto it = stateIndex.find(state.getState());
    if (it == stateIndex.end())
      return failWith(emitError, "entry '" + out.name +
                                     "' uses undeclared state '" +
                                     state.getState().getValue() + "'");
    out.args.push_back({true, it->second,
                        state.getAccess() == StateAccess::Write
                            ? schema::Access::Write
                            : schema::Access::Read});
  }
  for (Attribute o : entry.getOutputs()) {
    auto output = dyn_cast<ABITensorAttr>(o);
    if (!output || output.getPreconditions())
      return failWith(emitError, "entry '" + out.name + "' has output " +
                                     str(o) +
                                     ", which is no #grove.abi_tensor "
                                     "without preconditions");
    out.outputs.emplace_back();
    if (failed(tensorDesc(emitError, output, out.outputs.back())))
      return failure();
  }
  if (ABICollectivesAttr collectives = entry.getCollectives()) {
    out.collectives.config = collectives.getConfig().str();
    for (Attribute op : collectives.getOps()) {
      auto text = dyn_cast<StringAttr>(op);
      if (!text)
        return failWith(emitError, "entry '" + out.name + "' has collective " +
                                       str(op) + ", which is no string");
      out.collectives.ops.push_back(text.str());
    }
  }
  return success();
}
} // namespace

FailureOr<schema::ModelDesc>
ABIModelAttr::toSchema(EmitFn emitError, StringAttr module, StringAttr target,
                       ArrayAttr state, ArrayAttr entries) {
  schema::ModelDesc model;
  model.module = module.str();
  model.target = target.str();
  llvm::StringMap<size_t> stateIndex;
  for (Attribute a : state) {
    auto s = dyn_cast<ABIStateAttr>(a);
    if (!s)
      return failWith(emitError, "'state' holds " + str(a) +
                                     ", which is no #grove.abi_state");
    schema::StateDesc desc;
    if (failed(tensorFields(emitError, s.getName(), s.getType(), desc)))
      return failure();
    if (IntegerAttr init = s.getInit()) {
      if (init.getValue().getActiveBits() > 64)
        return failWith(emitError, "state '" + s.getName().getValue() +
                                       "' has an init wider than 64 bits");
      desc.kind = schema::StateKind::Initialized;
      desc.initBits = init.getValue().getZExtValue();
    }
    stateIndex.try_emplace(s.getName(), model.params.size());
    model.params.push_back(std::move(desc));
  }
  for (Attribute a : entries) {
    model.entries.emplace_back();
    if (failed(entryDesc(emitError, a, stateIndex, model.entries.back())))
      return failure();
  }
  schema::ParseResult r = schema::validateModel(model);
  if (r)
    return failWith(emitError, "invalid model descriptor" +
                                   (r.where.empty() ? "" : " at " + r.where) +
                                   ": " + r.message);
  return model;
}

LogicalResult ABIModelAttr::verify(EmitFn emitError, StringAttr module,
                                   StringAttr target, ArrayAttr state,
                                   ArrayAttr entries) {
  return toSchema(emitError, module, target, state, entries);
}

static ABITensorAttr tensorAttr(MLIRContext *ctx, const schema::TensorDesc &t) {
  SmallVector<int64_t> shape;
  for (int64_t d : t.shape)
    shape.push_back(d < 0 ? ShapedType::kDynamic : d);
  auto type = RankedTensorType::get(shape, fromDLDataType(ctx, t.dtype));
  ArrayAttr pre;
  if (!t.preconditions.empty()) {
    SmallVector<Attribute> list;
    for (const schema::Precondition &p : t.preconditions)
      list.push_back(preconditionToAttr(ctx, p));
    pre = ArrayAttr::get(ctx, list);
  }
  return ABITensorAttr::get(ctx, StringAttr::get(ctx, t.name), type, pre);
}

ABIModelAttr ABIModelAttr::fromSchema(MLIRContext *ctx,
                                      const schema::ModelDesc &model) {
  Builder b(ctx);
  SmallVector<Attribute> state, entries;
  for (const schema::StateDesc &s : model.params) {
    ABITensorAttr t = tensorAttr(ctx, s);
    IntegerAttr init;
    if (s.kind == schema::StateKind::Initialized)
      init = b.getIntegerAttr(b.getI64Type(), APInt(64, s.initBits));
    state.push_back(ABIStateAttr::get(ctx, t.getName(), t.getType(), init));
  }
  for (const schema::EntryDesc &e : model.entries) {
    SmallVector<Attribute> args, outputs;
    for (const schema::ArgDesc &a : e.args) {
      if (!a.isState) {
        args.push_back(tensorAttr(ctx, e.inputs[a.index]));
        continue;
      }
      args.push_back(ABIStateArgAttr::get(
          ctx, b.getStringAttr(model.params[a.index].name),
          a.access == schema::Access::Write ? StateAccess::Write
                                            : StateAccess::Read));
    }
    for (const schema::TensorDesc &t : e.outputs)
      outputs.push_back(tensorAttr(ctx, t));
    ABICollectivesAttr collectives;
    if (!e.collectives.empty()) {
      SmallVector<Attribute> ops;
      for (const std::string &op : e.collectives.ops)
        ops.push_back(b.getStringAttr(op));
      collectives = ABICollectivesAttr::get(
          ctx, b.getStringAttr(e.collectives.config), b.getArrayAttr(ops));
    }
    entries.push_back(ABIEntryAttr::get(ctx, b.getStringAttr(e.name),
                                        b.getArrayAttr(args),
                                        b.getArrayAttr(outputs), collectives));
  }
  return ABIModelAttr::get(ctx, b.getStringAttr(model.module),
                           b.getStringAttr(model.target), b.getArrayAttr(state),
                           b.getArrayAttr(entries));
}
