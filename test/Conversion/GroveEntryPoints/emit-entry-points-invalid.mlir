// RUN: grove-opt %s -split-input-file -verify-diagnostics --grove-emit-entry-points

// One case per diagnostic of grove-emit-entry-points (EmitEntryPoints.cpp),
// on hand-written LLVM-dialect modules.

// Not through grove-prepare-abi: no descriptor or module name.
// expected-error @+1 {{expects a module prepared by grove-prepare-abi}}
module @unprepared {
  llvm.func @f() {
    llvm.return
  }
}

// -----

// One of the two module attributes missing is enough.
// expected-error @+1 {{expects a module prepared by grove-prepare-abi}}
module @no_module attributes {grove.abi.model = #grove.abi_model<module = "m", target = "host", state = [], entries = []>} {
}

// -----

// An entry must say how many of its arguments are the caller's inputs.
module @no_inputs attributes {grove.abi.model = #grove.abi_model<module = "m", target = "host", state = [], entries = [#grove.abi_entry<name = "f", args = [], outputs = []>]>, grove.abi.module = "m"} {
  // expected-error @+1 {{entry point lacks its _mlir_ciface_ wrapper or name, or its input count}}
  llvm.func @_grove_m_f() attributes {grove.abi.entry = 0 : i64, grove.abi.name = "f"} {
    llvm.return
  }
  llvm.func @_mlir_ciface__grove_m_f() attributes {grove.abi.entry = 0 : i64, grove.abi.name = "f"} {
    llvm.return
  }
}

// -----

module @no_ciface attributes {grove.abi.model = #grove.abi_model<module = "m", target = "host", state = [], entries = [#grove.abi_entry<name = "f", args = [], outputs = []>]>, grove.abi.module = "m"} {
  // expected-error @+1 {{entry point lacks its _mlir_ciface_ wrapper or name}}
  llvm.func @_grove_m_f() attributes {grove.abi.entry = 0 : i64, grove.abi.inputs = 0 : i64, grove.abi.name = "f"} {
    llvm.return
  }
}

// -----

module @no_name attributes {grove.abi.model = #grove.abi_model<module = "m", target = "host", state = [], entries = [#grove.abi_entry<name = "f", args = [], outputs = []>]>, grove.abi.module = "m"} {
  // expected-error @+1 {{entry point lacks its _mlir_ciface_ wrapper or name}}
  llvm.func @_grove_m_f() attributes {grove.abi.entry = 0 : i64} {
    llvm.return
  }
  llvm.func @_mlir_ciface__grove_m_f() attributes {grove.abi.entry = 0 : i64} {
    llvm.return
  }
}

// -----

module @scalar_result attributes {grove.abi.model = #grove.abi_model<module = "m", target = "host", state = [], entries = [#grove.abi_entry<name = "f", args = [], outputs = [#grove.abi_tensor<name = "out0", type = tensor<f32>>]>]>, grove.abi.module = "m"} {
  // expected-error @+1 {{entry point returns a non-tensor value}}
  llvm.func @_grove_m_f() -> i32 attributes {grove.abi.entry = 0 : i64, grove.abi.inputs = 0 : i64, grove.abi.name = "f"} {
    %0 = llvm.mlir.constant(0 : i32) : i32
    llvm.return %0 : i32
  }
  llvm.func @_mlir_ciface__grove_m_f() -> i32 attributes {grove.abi.entry = 0 : i64, grove.abi.inputs = 0 : i64, grove.abi.name = "f"} {
    %0 = llvm.call @_grove_m_f() : () -> i32
    llvm.return %0 : i32
  }
}

// -----

// expected-error @+1 {{entry point indices are not contiguous}}
module @gap attributes {grove.abi.model = #grove.abi_model<module = "m", target = "host", state = [], entries = [#grove.abi_entry<name = "f", args = [], outputs = []>, #grove.abi_entry<name = "g", args = [], outputs = []>]>, grove.abi.module = "m"} {
  llvm.func @_grove_m_f() attributes {grove.abi.entry = 0 : i64, grove.abi.inputs = 0 : i64, grove.abi.name = "f"} {
    llvm.return
  }
  llvm.func @_mlir_ciface__grove_m_f() attributes {grove.abi.entry = 0 : i64, grove.abi.inputs = 0 : i64, grove.abi.name = "f"} {
    llvm.return
  }
  llvm.func @_grove_m_g() attributes {grove.abi.entry = 2 : i64, grove.abi.inputs = 0 : i64, grove.abi.name = "g"} {
    llvm.return
  }
  llvm.func @_mlir_ciface__grove_m_g() attributes {grove.abi.entry = 2 : i64, grove.abi.inputs = 0 : i64, grove.abi.name = "g"} {
    llvm.return
  }
}

// -----

// expected-error @+1 {{entry point indices are not contiguous}}
module @duplicate attributes {grove.abi.model = #grove.abi_model<module = "m", target = "host", state = [], entries = [#grove.abi_entry<name = "f", args = [], outputs = []>, #grove.abi_entry<name = "g", args = [], outputs = []>]>, grove.abi.module = "m"} {
  llvm.func @_grove_m_f() attributes {grove.abi.entry = 0 : i64, grove.abi.inputs = 0 : i64, grove.abi.name = "f"} {
    llvm.return
  }
  llvm.func @_mlir_ciface__grove_m_f() attributes {grove.abi.entry = 0 : i64, grove.abi.inputs = 0 : i64, grove.abi.name = "f"} {
    llvm.return
  }
  llvm.func @_grove_m_g() attributes {grove.abi.entry = 0 : i64, grove.abi.inputs = 0 : i64, grove.abi.name = "g"} {
    llvm.return
  }
  llvm.func @_mlir_ciface__grove_m_g() attributes {grove.abi.entry = 0 : i64, grove.abi.inputs = 0 : i64, grove.abi.name = "g"} {
    llvm.return
  }
}

// -----

// The runtime entry the typed functions call is reserved: a symbol of that
// name with another type is reported, not called with the wrong signature.
module @reserved_invoke attributes {grove.abi.model = #grove.abi_model<module = "m", target = "host", state = [], entries = []>, grove.abi.module = "m"} {
  // expected-error @+1 {{symbol @grove_rt_invoke is reserved for the runtime service of type '!llvm.func<i32 (ptr, ptr, i32, ptr)>'}}
  llvm.func @grove_rt_invoke(i32) -> i32
}
