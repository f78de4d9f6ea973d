// RUN: not grove-opt %s -grove-batch-dynamic-trees=mode=depth 2>&1 | FileCheck %s

// A mode outside the set is refused by the option's parser, with the modes.
// CHECK: for the --mode option: 'depth' is not one of levels, levels-by-arity or nodes

module {
}
