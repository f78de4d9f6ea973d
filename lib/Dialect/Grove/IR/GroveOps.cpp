//===- GroveOps.cpp - Grove op verifiers and shape rules ------------------===//
//
// Every user-visible shape, rank, dtype or attribute mismatch is diagnosed
// here; lowerings may assume verified IR. Folds live in GroveFolds.cpp.
//
//===----------------------------------------------------------------------===//

#include "grove/Dialect/Grove/IR/GroveOps.h"

#include "grove/Dialect/Grove/IR/ABIAttrs.h"
#include "mlir/IR/PatternMatch.h"

#include "grove/ModelSchema.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::grove;

//===----------------------------------------------------------------------===//
// Shared shape rules
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<int64_t>>
mlir::grove::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align at the trailing dimension; missing leading dimensions are 1.
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l == 1) {
      result[i] = r;
    } else if (r == 1) {
      result[i] = l;
    } else if (ShapedType::isDynamic(l)) {
      result[i] = r;
    } else if (ShapedType::isDynamic(r) || l == r) {
      result[i] = l;
    } else {
      return failure();
    }
  }
  return result;
}

FailureOr<int64_t> mlir::grove::normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return failure();
  return axis < 0 ? axis + rank : axis;
}

/// Formats a shape as `2x?x8` for diagnostics.
static std::string formatShape(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (shape.empty())
    return "scalar";
  llvm::interleave(
      shape, os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      },
      "x");
  return s;
}

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static LogicalResult verifySameElementType(Operation *op, ValueRange values) {
  Type elt = tensorType(values.front()).getElementType();
  for (Value v : values.drop_front())
    if (tensorType(v).getElementType() != elt)
      return op->emitOpError("expects all operands and results to have "
                             "element type ")
             << elt << " (got " << tensorType(v).getElementType() << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// State ops
//===----------------------------------------------------------------------===//

LogicalResult ParamOp::verify() {
  auto type = dyn_cast<RankedTensorType>(getType());
  if (!type)
    return emitOpError("expects a ranked tensor type (got ")
           << getType() << ")";
  if (!type.hasStaticShape())
    return emitOpError("expects a static shape (got ") << type << ")";
  Type elt = type.getElementType();
  bool supportedInt =
      llvm::any_of(ArrayRef<unsigned>{1, 8, 16, 32, 64},
                   [&](unsigned w) { return elt.isSignlessInteger(w); });
  if (!elt.isF32() && !elt.isF16() && !elt.isBF16() && !elt.isF64() &&
      !supportedInt)
    return emitOpError("expects an f32, f16, bf16, f64, i1, i8, i16, i32 or "
                       "i64 element type (got ")
           << elt << ")";
  if (::grove::schema::isReservedStateName(getSymName()))
    return emitOpError("name '")
           << getSymName()
           << "' is reserved by the safetensors format (its saved weights "
              "could never be loaded)";
  if (std::optional<TypedAttr> init = getInitialValue()) {
    if (!isa<FloatAttr, IntegerAttr>(*init) || init->getType() != elt)
      return emitOpError("initial value must be a scalar of the element "
                         "type ")
             << elt << " (got " << *init << ")";
  }
  return success();
}

FailureOr<uint64_t> ParamOp::getInitialBits() {
  std::optional<TypedAttr> init = getInitialValue();
  if (!init)
    return failure();
  llvm::APInt bits = isa<FloatAttr>(*init)
                         ? cast<FloatAttr>(*init).getValue().bitcastToAPInt()
                         : cast<IntegerAttr>(*init).getValue();
  return bits.getZExtValue();
}

/// The grove.param `name` refers to, checked to have type `type`.
static LogicalResult verifyParamUse(Operation *op, FlatSymbolRefAttr name,
                                    Type type, StringRef what,
                                    SymbolTableCollection &symbolTable) {
  auto param = symbolTable.lookupNearestSymbolFrom<ParamOp>(op, name);
  if (!param)
    return op->emitOpError("references an undefined grove.param ") << name;
  if (param.getType() != type)
    return op->emitOpError(what) << type << " does not match the type of "
                                 << name << " (" << param.getType() << ")";
  return success();
}

bool GetParamOp::writesState() { return false; }
bool SetParamOp::writesState() { return true; }

LogicalResult SetParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyParamUse(*this, getNameAttr(), getValue().getType(),
                        "value type ", symbolTable);
}

Value mlir::grove::getReshapeRoot(Value v) {
  while (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
      v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  return v;
}

void mlir::grove::sinkStateWrites(Block &block) {
  if (!block.mightHaveTerminator())
    return;
  Operation *end = block.getTerminator();
  SmallVector<AssignOp> writes(block.getOps<AssignOp>());
  for (AssignOp assign : writes)
    assign->moveBefore(end);
}

BlockArgument AssignOp::getStateArgument() {
  return dyn_cast<BlockArgument>(getReshapeRoot(getState()));
}

LogicalResult AssignOp::verify() {
  BlockArgument arg = getStateArgument();
  auto func = arg ? dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp())
                  : nullptr;
  if (!func || !arg.getOwner()->isEntryBlock() ||
      !func.getArgAttr(arg.getArgNumber(), kStateArgAttr) ||
      !func.getArgAttr(arg.getArgNumber(), kWritesAttr))
    return emitOpError("expects a function argument marked grove.state and "
                       "grove.writes as its state");
  return success();
}

Value mlir::grove::createSplatConstant(OpBuilder &b, Location loc,
                                       RankedTensorType type, double value) {
  return ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(type,
                             b.getFloatAttr(type.getElementType(), value)));
}

bool mlir::grove::isZeros(Value v) {
  if (auto broadcast = v.getDefiningOp<BroadcastToOp>())
    v = broadcast.getInput();
  DenseElementsAttr value;
  return matchPattern(v, m_Constant(&value)) && value.isSplat() &&
         isa<FloatType>(value.getElementType()) &&
         value.getSplatValue<APFloat>().isZero();
}

LogicalResult AssignOp::canonicalize(AssignOp op, PatternRewriter &rewriter) {
  if (op.getValue() != op.getState())
    return failure();
  rewriter.eraseOp(op);
  return success();
}

LogicalResult GetParamOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyParamUse(*this, getNameAttr(), getType(), "result type ",
                        symbolTable);
}

//===----------------------------------------------------------------------===//
// Tensor ops
//===----------------------------------------------------------------------===//

LogicalResult mlir::grove::verifyTensorSizes(Operation *op) {
  auto check = [&](Type type) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return success();
    if (tensor.getRank() > ::grove::schema::kMaxRank)
      return op->emitOpError("tensor type ")
             << tensor << " has rank " << tensor.getRank()
             << "; the runtime takes ranks up to " << ::grove::schema::kMaxRank;
    unsigned bits = tensor.getElementType().isIntOrFloat()
                        ? tensor.getElementType().getIntOrFloatBitWidth()
                        : 64;
    int64_t bytes = std::max<int64_t>(1, (bits + 7) / 8);
    for (int64_t d : tensor.getShape()) {
      if (ShapedType::isDynamic(d))
        continue;
      std::optional<int64_t> more = llvm::checkedMul(bytes, d);
      if (!more || *more > kMaxTensorBytes)
        return op->emitOpError("tensor type ")
               << tensor << " holds more than 2^48 bytes";
      bytes = *more;
    }
    return success();
  };
  for (Type t :
       llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes()))
    if (failed(check(t)))
      return failure();
  for (NamedAttribute attr : op->getAttrs())
    if (auto type = dyn_cast<TypeAttr>(attr.getValue()))
      if (failed(check(type.getValue())))
        return failure();
  return success();
}

/// Product of the static dimensions, and whether any dimension is dynamic.
int64_t mlir::grove::getStaticProduct(ArrayRef<int64_t> shape) {
  int64_t product = 1;
  for (int64_t d : shape)
    if (!ShapedType::isDynamic(d))
      product *= d;
  return product;
}

static std::pair<int64_t, bool> staticProduct(ArrayRef<int64_t> shape) {
  return {getStaticProduct(shape), ShapedType::isDynamicShape(shape)};
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("expects the same element type (got ")
           << in.getElementType() << " and " << out.getElementType() << ")";
  if (out.getNumDynamicDims() > 1)
    return emitOpError("expects at most one dynamic result dimension (got ")
           << out.getNumDynamicDims() << ")";
  auto [inCount, inDynamic] = staticProduct(in.getShape());
  auto [outCount, outDynamic] = staticProduct(out.getShape());
  if (!inDynamic && !outDynamic && inCount != outCount)
    return emitOpError("expects the same number of elements (got ")
           << inCount << " for " << formatShape(in.getShape()) << " and "
           << outCount << " for " << formatShape(out.getShape()) << ")";
  if (outDynamic && outCount == 0)
    return emitOpError("cannot infer the dynamic result dimension next to a "
                       "static dimension of size 0");
  if (!inDynamic && outDynamic && inCount % outCount != 0)
    return emitOpError("cannot infer the dynamic result dimension: ")
           << inCount << " elements are not a multiple of " << outCount;
  if (inDynamic && !outDynamic)
    return emitOpError("expects a dynamic result dimension when the input "
                       "has one (got ")
           << formatShape(in.getShape()) << " -> "
           << formatShape(out.getShape()) << ")";
  return success();
}

LogicalResult TransposeOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  ArrayRef<int64_t> perm = getPermutation();
  if (static_cast<int64_t>(perm.size()) != in.getRank())
    return emitOpError("expects a permutation of ")
           << in.getRank() << " dimensions (got " << perm.size() << ")";
  llvm::SmallBitVector seen(perm.size());
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || seen.test(p))
      return emitOpError("expects permutation to be a permutation of [0, ")
             << in.getRank() << ") (got " << p << ")";
    seen.set(p);
  }
  if (in.getElementType() != out.getElementType())
    return emitOpError("expects the same element type");
  if (out.getRank() != in.getRank())
    return emitOpError("expects the result rank ")
           << in.getRank() << " (got " << out.getRank() << ")";
  for (auto [i, p] : llvm::enumerate(perm))
    if (out.getDimSize(i) != in.getDimSize(p))
      return emitOpError("expects result dimension ")
             << i << " to be input dimension " << p << " ("
             << formatShape(in.getDimSize(p)) << "), got "
             << formatShape(out.getDimSize(i));
  return success();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("expects at least one input");
  RankedTensorType out = getType();
  int64_t rank = out.getRank();
  for (auto [idx, v] : llvm::enumerate(getInputs()))
    if (tensorType(v).getRank() == 0)
      return emitOpError("expects inputs of rank at least 1 (input ")
             << idx << " is a scalar)";
  if (rank == 0)
    return emitOpError("expects a result of rank at least 1");
  int64_t axis = getAxisAttr().getInt();
  if (axis < 0 || axis >= rank)
    return emitOpError("expects axis in [0, ")
           << rank << ") (got " << axis << ")";
  SmallVector<Value> all(getInputs());
  all.push_back(getResult());
  if (failed(verifySameElementType(*this, all)))
    return failure();
  int64_t axisSize = 0;
  for (auto [idx, v] : llvm::enumerate(getInputs())) {
    RankedTensorType t = tensorType(v);
    if (t.getRank() != rank)
      return emitOpError("expects every input to have rank ")
             << rank << " (input " << idx << " has rank " << t.getRank() << ")";
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis)
        continue;
      int64_t a = t.getDimSize(d), b = out.getDimSize(d);
      if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
        return emitOpError("expects input ")
               << idx << " dimension " << d << " to be " << b << " (got " << a
               << ")";
      if (ShapedType::isDynamic(a) != ShapedType::isDynamic(b))
        return emitOpError("expects input ")
               << idx << " dimension " << d
               << " to be dynamic exactly when the result's is";
    }
    int64_t s = t.getDimSize(axis);
    axisSize = (ShapedType::isDynamic(s) || ShapedType::isDynamic(axisSize))
                   ? ShapedType::kDynamic
                   : axisSize + s;
  }
  if (out.getDimSize(axis) != axisSize)
    return emitOpError("expects result dimension ")
           << axis << " to be " << formatShape(axisSize) << " (got "
           << formatShape(out.getDimSize(axis)) << ")";
  return success();
}

LogicalResult SliceOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  int64_t rank = in.getRank();
  ArrayRef<int64_t> starts = getStarts(), limits = getLimits(),
                    strides = getStrides();
  if (static_cast<int64_t>(starts.size()) != rank ||
      static_cast<int64_t>(limits.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank)
    return emitOpError("expects ")
           << rank << " starts, limits and strides (got " << starts.size()
           << ", " << limits.size() << ", " << strides.size() << ")";
  if (in.getElementType() != out.getElementType())
    return emitOpError("expects the same element type");
  if (out.getRank() != rank)
    return emitOpError("expects result rank ") << rank;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = in.getDimSize(d), start = starts[d], limit = limits[d],
            stride = strides[d];
    if (stride < 1)
      return emitOpError("expects positive strides (got ")
             << stride << " in dimension " << d << ")";
    if (start < 0)
      return emitOpError("expects non-negative starts (got ")
             << start << " in dimension " << d << ")";
    if (limit != -1 && limit < start)
      return emitOpError("expects limit >= start in dimension ")
             << d << " (got " << start << " to " << limit << ")";
    // A static bound inside a dynamic dimension would be trusted, not
    // known: slice to the end, or cast the dimension to a static size.
    if (ShapedType::isDynamic(dim) && limit != -1)
      return emitOpError("dimension ")
             << d << " is dynamic: slice it to the end (limit -1) or cast it "
             << "to a static size first (tensor.cast)";
    if (!ShapedType::isDynamic(dim) && (start > dim || limit > dim))
      return emitOpError("slice [")
             << start << ", " << limit << ") is out of bounds for dimension "
             << d << " of size " << dim;
    int64_t expected;
    if (limit == -1 && ShapedType::isDynamic(dim)) {
      expected = ShapedType::kDynamic;
    } else {
      int64_t end = limit == -1 ? dim : limit;
      // ceil((end - start) / stride) without overflow for huge strides.
      expected = end <= start ? 0 : (end - start - 1) / stride + 1;
    }
    if (out.getDimSize(d) != expected)
      return emitOpError("expects result dimension ")
             << d << " to be " << formatShape(expected) << " (got "
             << formatShape(out.getDimSize(d)) << ")";
  }
  return success();
}

LogicalResult ReverseOp::verify() {
  RankedTensorType type = getType();
  llvm::SmallDenseSet<int64_t> seen;
  for (int64_t a : getAxes()) {
    if (a < 0 || a >= type.getRank())
      return emitOpError("axis ")
             << a << " is out of range for rank " << type.getRank();
    if (!seen.insert(a).second)
      return emitOpError("reverses axis ") << a << " twice";
    if (type.isDynamicDim(a))
      return emitOpError("axis ") << a << " is dynamic; reverse static axes";
  }
  return success();
}

LogicalResult BroadcastToOp::verify() {
  RankedTensorType in = getInput().getType(), out = getType();
  if (in.getElementType() != out.getElementType())
    return emitOpError("expects the same element type");
  if (in.getRank() > out.getRank())
    return emitOpError("cannot broadcast rank ")
           << in.getRank() << " to the lower rank " << out.getRank();
  if (getDynamicSizes().size() != out.getNumDynamicDims())
    return emitOpError("expects one size operand per dynamic result "
                       "dimension (")
           << out.getNumDynamicDims() << "), got " << getDynamicSizes().size();
  int64_t lead = out.getRank() - in.getRank();
  for (int64_t i = 0; i < in.getRank(); ++i) {
    int64_t a = in.getDimSize(i), b = out.getDimSize(lead + i);
    if (a == 1)
      continue;
    if (ShapedType::isDynamic(a) != ShapedType::isDynamic(b) ||
        (!ShapedType::isDynamic(a) && a != b))
      return emitOpError("cannot broadcast input dimension ")
             << i << " (" << formatShape(a) << ") to " << formatShape(b)
             << ": it must be 1 or equal";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Math ops
//===----------------------------------------------------------------------===//

LogicalResult SelectOp::verify() {
  RankedTensorType mask = getMask().getType(), type = getType();
  if (mask.getElementType() != type.getElementType())
    return emitOpError("expects a mask of the values' element type");
  FailureOr<SmallVector<int64_t>> shape =
      broadcastShapes(mask.getShape(), type.getShape());
  if (failed(shape) || ArrayRef<int64_t>(*shape) != type.getShape())
    return emitOpError("expects a mask that broadcasts to ")
           << formatShape(type.getShape()) << " (got "
           << formatShape(mask.getShape()) << ")";
  return success();
}

LogicalResult mlir::grove::verifyBroadcasting(Operation *op) {
  if (failed(verifySameElementType(
          op, {op->getOperand(0), op->getOperand(1), op->getResult(0)})))
    return failure();
  ArrayRef<int64_t> l = tensorType(op->getOperand(0)).getShape();
  ArrayRef<int64_t> r = tensorType(op->getOperand(1)).getShape();
  ArrayRef<int64_t> out = tensorType(op->getResult(0)).getShape();
  FailureOr<SmallVector<int64_t>> expected = broadcastShapes(l, r);
  if (failed(expected))
    return op->emitOpError("operand shapes ")
           << formatShape(l) << " and " << formatShape(r)
           << " are not broadcast-compatible";
  if (ArrayRef<int64_t>(*expected) != out)
    return op->emitOpError("expects result shape ")
           << formatShape(*expected) << " (got " << formatShape(out) << ")";
  // A dynamic operand dimension must not meet a static one (other than a
  // stretching 1): the size would be trusted, not known. tensor.cast states
  // it instead.
  for (auto [i, v] : llvm::enumerate(op->getOperands())) {
    ArrayRef<int64_t> shape = tensorType(v).getShape();
    for (auto [j, d] : llvm::enumerate(shape)) {
      int64_t r = out[out.size() - shape.size() + j];
      if (ShapedType::isDynamic(d) && !ShapedType::isDynamic(r))
        return op->emitOpError("operand ")
               << i << " dimension " << j
               << " is dynamic where the result's is " << r
               << "; cast it to the static size first (tensor.cast)";
    }
  }
  return success();
}

static bool dimsMatch(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

LogicalResult MatmulOp::verify() {
  if (failed(verifySameElementType(*this, {getLhs(), getRhs(), getResult()})))
    return failure();
  RankedTensorType lt = getLhs().getType(), rt = getRhs().getType(),
                   ot = getType();
  int64_t lr = lt.getRank(), rr = rt.getRank();
  bool supported = (lr == 2 && rr == 2) || (lr == 3 && (rr == 3 || rr == 2));
  if (!supported)
    return emitOpError("expects ranks 2x2, 3x3 or 3x2 (got ")
           << lr << "x" << rr << ")";
  int64_t m = lt.getDimSize(lr - (getTransposeLhs() ? 1 : 2));
  int64_t k = lt.getDimSize(lr - (getTransposeLhs() ? 2 : 1));
  int64_t k2 = rt.getDimSize(rr - (getTransposeRhs() ? 1 : 2));
  int64_t n = rt.getDimSize(rr - (getTransposeRhs() ? 2 : 1));
  if (!dimsMatch(k, k2))
    return emitOpError("contracting dimensions differ: lhs has ")
           << k << ", rhs has " << k2;
  if (ShapedType::isDynamic(k) != ShapedType::isDynamic(k2))
    return emitOpError("expects the contracting dimension to be static or "
                       "dynamic on both operands");
  SmallVector<int64_t> expected;
  if (lr == 3) {
    int64_t b = lt.getDimSize(0);
    if (rr == 3) {
      int64_t b2 = rt.getDimSize(0);
      if (!dimsMatch(b, b2) ||
          ShapedType::isDynamic(b) != ShapedType::isDynamic(b2))
        return emitOpError("batch dimensions differ: lhs has ")
               << formatShape(b) << ", rhs has " << formatShape(b2);
    }
    expected.push_back(b);
  }
  expected.push_back(m);
  expected.push_back(n);
  if (ot.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError("expects result shape ")
           << formatShape(expected) << " (got " << formatShape(ot.getShape())
           << ")";
  return success();
}

namespace {
/// one_hot(ids) @ table reads the table's rows: a lookup moves D numbers a
/// row where the product takes C-long dot products, and the lookup's
/// gradient sums rows per id where the product's is a GEMM over the
/// one-hot matrix.
struct OneHotMatmulToEmbedding : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto oneHot = op.getLhs().getDefiningOp<OneHotOp>();
    // The lookup's gradient takes a table of static shape.
    if (!oneHot || op.getTransposeLhs() || op.getTransposeRhs() ||
        op.getRhs().getType().getRank() != 2 ||
        !op.getRhs().getType().hasStaticShape())
      return failure();
    Value ids = oneHot.getLabels();
    auto idsType = cast<RankedTensorType>(ids.getType());
    // The lookup's result is the ids' shape and a row: the product's own
    // where their static sizes agree.
    if (!idsType.getElementType().isInteger(32) ||
        op.getType().getShape().drop_back() != idsType.getShape())
      return failure();
    // Unchecked: one_hot's out-of-range labels give zeros, and a call
    // with them must not start failing at the ABI.
    rewriter.replaceOpWithNewOp<EmbeddingOp>(op, op.getType(), op.getRhs(), ids,
                                             /*unchecked=*/true);
    return success();
  }
};
} // namespace

void MatmulOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<OneHotMatmulToEmbedding>(context);
}

static LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank) {
  if (failed(normalizeAxis(axis, rank)))
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxisAttr().getInt(), getType().getRank());
}
LogicalResult LogSoftmaxOp::verify() {
  return verifyAxis(*this, getAxisAttr().getInt(), getType().getRank());
}

/// Normalised, sorted reduction axes; fails (with a diagnostic) on duplicates
/// or out-of-range values.
static FailureOr<SmallVector<int64_t>>
getReductionAxes(Operation *op, ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t a : axes) {
    FailureOr<int64_t> n = normalizeAxis(a, rank);
    if (failed(n)) {
      op->emitOpError("axis ") << a << " is out of range for rank " << rank;
      return failure();
    }
    if (llvm::is_contained(result, *n)) {
      op->emitOpError("axis ") << a << " is repeated";
      return failure();
    }
    result.push_back(*n);
  }
  llvm::sort(result);
  return result;
}

LogicalResult mlir::grove::verifyReducesAxes(Operation *op) {
  auto axesAttr = op->getAttrOfType<DenseI64ArrayAttr>("axes");
  if (!axesAttr)
    return op->emitOpError("expects a dense i64 array 'axes'");
  ArrayRef<int64_t> axes = axesAttr.asArrayRef();
  bool keepdims = op->hasAttr("keepdims");
  RankedTensorType in = tensorType(op->getOperand(0));
  RankedTensorType out = tensorType(op->getResult(0));
  if (in.getElementType() != out.getElementType())
    return op->emitOpError("expects the same element type");
  FailureOr<SmallVector<int64_t>> normalized =
      getReductionAxes(op, axes, in.getRank());
  if (failed(normalized))
    return failure();
  SmallVector<int64_t> expected;
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (!llvm::is_contained(*normalized, d))
      expected.push_back(in.getDimSize(d));
    else if (keepdims)
      expected.push_back(1);
  }
  if (out.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError("expects result shape ")
           << formatShape(expected) << " (got " << formatShape(out.getShape())
           << ")";
  return success();
}

#include "grove/Dialect/Grove/IR/GroveEnums.cpp.inc"

#define GET_OP_CLASSES
#include "grove/Dialect/Grove/IR/GroveOps.cpp.inc"
