// RUN: grove-opt %s -grove-batch-dynamic-trees=mode=depth -verify-diagnostics

// expected-error @+1 {{grove-batch-dynamic-trees: mode must be 'levels', 'nodes' or 'levels-by-arity', got 'depth'}}
module {
}
