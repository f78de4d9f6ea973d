//===- Passes.td - Grove conversion passes ---------------------------------===//
//
// Conversions out of grove and the target-specific steps after bufferization.
// The folder names under lib/Conversion spell the lowering graph.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_CONVERSION_PASSES_TD
#define GROVE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertGroveToLinalg : Pass<"convert-grove-to-linalg"> {
  let summary = "lowers grove compute ops to linalg, tensor and arith";
  let description = [{
    Elementwise ops become `linalg.generic`s (broadcasting through indexing
    maps, so that `linalg-fuse-elementwise-ops` can fuse chains), matmuls
    become `linalg.matmul`/`linalg.batch_matmul` with transposes in their
    indexing maps, reductions `linalg.reduce`, softmax a reduce-map-reduce
    sequence, and data movement `tensor`/`linalg` ops. Dynamic sizes are
    read with `tensor.dim`. `grove.param`/`grove.get_param` are left to the
    ABI passes.
  }];
  let dependentDialects = [
    "arith::ArithDialect", "linalg::LinalgDialect", "math::MathDialect",
    "tensor::TensorDialect"
  ];
}

def ConvertGroveChecksToRuntime
    : Pass<"convert-grove-checks-to-runtime", "ModuleOp"> {
  let summary = "lowers grove.agree_dims to a runtime report and a minimum";
  let description = [{
    Each `grove.agree_dims` becomes `scf.if (lhs != rhs)` around a call to
    `grove_rt_dim_mismatch(lhs, rhs, message)` (runtime/include/grove/abi.h)
    and `arith.minui lhs, rhs`: the runtime fails the call with
    GROVE_ERROR_INVALID_ARGUMENT and the code never reads out of bounds.
  }];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect",
                           "LLVM::LLVMDialect", "scf::SCFDialect"];
}

def ConvertLinalgToBlas : Pass<"convert-linalg-to-blas", "ModuleOp"> {
  let summary = "replaces f32 memref matmuls by calls into the runtime's BLAS";
  let description = [{
    Host target, after bufferization: `linalg.matmul` and
    `linalg.batch_matmul` on f32 memrefs (any strides, transposes given by
    their indexing maps) become calls to `grove_rt_matmul_f32` /
    `grove_rt_batch_matmul_f32` (runtime/include/grove/abi.h), which use
    OpenBLAS. A zero `linalg.fill` of the output right before the matmul is
    folded into `beta = 0`.
  }];
  let dependentDialects = ["func::FuncDialect", "arith::ArithDialect",
                           "memref::MemRefDialect"];
}

def GroveLegalizeMemRef : Pass<"grove-legalize-memref"> {
  let summary = "rewrites memref ops the upstream LLVM lowering cannot take";
  let description = [{
    * A `memref.copy` involving a non-identity layout would lower to a call
      of `memrefCopy` from MLIR's C runner utilities; as `linalg.copy` it
      becomes loops with no library dependency. Contiguous copies stay (they
      become `memcpy`).
    * A `memref.expand_shape` with several dynamic sizes in one
      reassociation group crashes MLIR 22's expand-strided-metadata
      (llvm-project#186830); it becomes a `memref.reinterpret_cast` with
      strides computed from its `output_shape`.
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "memref::MemRefDialect"];
}

def GroveEmitEntryPoints : Pass<"grove-emit-entry-points", "ModuleOp"> {
  let summary = "generates the C ABI of a lowered model (LLVM dialect)";
  let description = [{
    Runs on LLVM-dialect IR produced from a module that went through
    `grove-prepare-abi`. For each entry point it emits a packed function
    (`void(void **)`, see docs/abi.md) calling the `_mlir_ciface_` wrapper,
    and the typed `<module>_<function>(ctx, inputs..., outputs...)` that
    forwards to `grove_rt_invoke`; then the `<module>_model` definition with
    the descriptor and the table of packed functions. Internal functions get
    internal linkage.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

#endif // GROVE_CONVERSION_PASSES_TD
