//===- GroveInterfaces.td - Op interfaces of the grove dialect -------------===//
//
// Interfaces passes query instead of listing op classes. The training
// issue's vector-Jacobian-product interface goes here too.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVEINTERFACES_TD
#define GROVE_DIALECT_GROVE_IR_GROVEINTERFACES_TD

include "mlir/IR/OpBase.td"

def Grove_StateAccessOpInterface : OpInterface<"StateAccessOpInterface"> {
  let description = [{
    An op that reads or writes a piece of module state (a `grove.param`) by
    name: what grove-params-to-arguments turns into a state argument with a
    role.
  }];
  let cppNamespace = "::mlir::grove";
  let methods = [
    InterfaceMethod<"The grove.param accessed.", "::mlir::FlatSymbolRefAttr",
                    "getStateName", (ins), [{ return $_op.getNameAttr(); }]>,
    InterfaceMethod<"Whether the op writes the state (else it reads it).",
                    "bool", "writesState", (ins)>,
  ];
}

#endif // GROVE_DIALECT_GROVE_IR_GROVEINTERFACES_TD
