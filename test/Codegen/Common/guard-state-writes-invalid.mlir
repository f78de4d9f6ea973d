// RUN: grove-opt %s -split-input-file --grove-guard-state-writes --verify-diagnostics

// grove-guard-state-writes refuses what it cannot guard.

// A write whose result is used later cannot be guarded.
func.func private @writes_and_returns(memref<4xf32>) -> i32
func.func @used(%s: memref<4xf32> {grove.state = @s, grove.writes}) -> i32 {
  // expected-error @below {{writes state and has results used later}}
  %r = func.call @writes_and_returns(%s) : (memref<4xf32>) -> i32
  return %r : i32
}

// -----

// A function of more than one block that writes state is refused.
// expected-error @below {{writes state from more than one block}}
func.func @blocks(%s: memref<4xf32> {grove.state = @s, grove.writes},
                  %c: i1) {
  cf.cond_br %c, ^a, ^b
^a:
  return
^b:
  return
}
