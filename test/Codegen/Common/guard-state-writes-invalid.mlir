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

// -----

// A service call given a buffer of state the function writes could write
// it, and skipping it on one rank could leave the ranks apart: refused.
func.func private @writes(memref<4xf32>)
func.func @service(%s: memref<4xf32> {grove.state = @s, grove.writes}) {
  // expected-error @below {{may write state through a call or around a check}}
  func.call @writes(%s) : (memref<4xf32>) -> ()
  return
}

// -----

// A check between two writes would report a failure the query before the
// first write cannot see.
func.func @check_between(%s: memref<4xf32> {grove.state = @s, grove.writes},
                         %t: memref<4xf32> {grove.state = @t, grove.writes},
                         %a: memref<4xf32>, %n: index, %m: index) {
  memref.copy %a, %s : memref<4xf32> to memref<4xf32>
  // expected-error @below {{may report a failure between the state writes}}
  %k = grove.agree_dims %n, %m, "n and m" : index
  memref.copy %a, %t : memref<4xf32> to memref<4xf32>
  return
}
