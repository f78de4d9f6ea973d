// RUN: not grove-opt %s -split-input-file --grove-insert-collectives="compressor=zip" 2>&1 | FileCheck %s --check-prefix=COMPRESSOR
// RUN: not grove-opt %s -split-input-file --grove-insert-collectives="error=sometimes" 2>&1 | FileCheck %s --check-prefix=ERROR
// RUN: not grove-opt %s -split-input-file --grove-insert-collectives="error=feedback" 2>&1 | FileCheck %s --check-prefix=FEEDBACK
// RUN: not grove-opt %s -split-input-file --grove-insert-collectives="error=reset" 2>&1 | FileCheck %s --check-prefix=RESET
// RUN: not grove-opt %s -split-input-file --grove-insert-collectives="compressor=grbs ratio=0" 2>&1 | FileCheck %s --check-prefix=RATIO
// RUN: not grove-opt %s -split-input-file --grove-insert-collectives="bucket-bytes=-1" 2>&1 | FileCheck %s --check-prefix=RATIO
// RUN: not grove-opt %s -split-input-file --grove-insert-collectives="compressor=grbs error=feedback ratio=auto" 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: not grove-opt %s -split-input-file --grove-insert-collectives="ratio=auto network-gbps=1 world-size=2" 2>&1 | FileCheck %s --check-prefix=AUTODENSE
// RUN: not grove-opt %s -split-input-file --grove-insert-collectives="compressor=grbs ratio=fast" 2>&1 | FileCheck %s --check-prefix=RATIOTEXT
// RUN: not grove-opt %s -split-input-file --grove-insert-collectives="compressor=topk error=feedback target=cuda" 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not grove-opt %s -split-input-file --grove-insert-collectives="target=tpu" 2>&1 | FileCheck %s --check-prefix=TARGETVALUE
// RUN: not grove-opt %s -split-input-file --grove-insert-collectives="compressor=bf16,topk error=feedback ratio=4" 2>&1 | FileCheck %s --check-prefix=LIST
// RUN: not grove-opt %s -split-input-file --grove-insert-collectives="compressor=bf16,zip error=feedback ratio=auto network-gbps=1 world-size=2" 2>&1 | FileCheck %s --check-prefix=LISTNAME
// RUN: not grove-opt %s -split-input-file --grove-insert-collectives="compressor=bf16, error=feedback ratio=auto network-gbps=1 world-size=2" 2>&1 | FileCheck %s --check-prefix=LISTEMPTY
// RUN: not grove-opt %s -split-input-file --grove-insert-collectives="compressor=bf16,powersgd error=feedback ratio=auto network-gbps=1 world-size=2" 2>&1 | FileCheck %s --check-prefix=LISTAUTO
// RUN: not grove-opt %s -split-input-file --grove-insert-collectives="compressor=bf16,topk error=feedback ratio=auto network-gbps=1 world-size=2 target=cuda" 2>&1 | FileCheck %s --check-prefix=LISTTARGET
// RUN: grove-opt %s -split-input-file --grove-insert-collectives="compressor=grbs error=feedback" -verify-diagnostics

// A value outside an option's set is refused by the option's parser, with
// the values it takes.
// ERROR: for the --error option: 'sometimes' is not one of none, feedback or reset
// RATIOTEXT: for the --ratio option: 'fast' is not an integer or auto
// TARGETVALUE: for the --target option: 'tpu' is not one of host or cuda

// Options the pass refuses, each a located error (the module's location).
// COMPRESSOR: error: grove-insert-collectives: unknown compressor 'zip' (expected none, fp16, bf16, grbs, randk, topk, sign, powersgd or int8)
// FEEDBACK: error: grove-insert-collectives: error=feedback needs a compressor (a dense average leaves no error)
// RESET: error: grove-insert-collectives: error=reset (CSER) averages random blocks: it needs compressor=grbs
// RATIO: error: grove-insert-collectives: ratio, period-ratio, sync-period, bucket-bytes and matrix-rank must be positive
// AUTO: error: grove-insert-collectives: ratio=auto needs network-gbps > 0, world-size >= 2, compute-gflops > 0 and batch-size >= 1
// AUTODENSE: error: grove-insert-collectives: ratio=auto picks a gradient compressor's ratio: give one or more, comma-separated (fp16, bf16, grbs, randk, topk, sign or int8) and error=feedback (what a bucket does not send must not be lost)
// A list of compressors is ratio=auto's choice; each one is checked.
// LIST: error: grove-insert-collectives: a list of compressors is for ratio=auto, which picks among them
// LISTNAME: error: grove-insert-collectives: unknown compressor 'zip' (expected
// LISTAUTO: error: grove-insert-collectives: compressor=powersgd has no ratios to pick: ratio=auto picks a gradient compressor's ratio: give one or more
// LISTEMPTY: error: grove-insert-collectives: empty entry in the compressor list 'bf16,'
// LISTTARGET: error: grove-insert-collectives: compressor=topk cannot run on target cuda
// TARGET: error: grove-insert-collectives: compressor=topk cannot run on target cuda: its selection (grove.top_k) runs on the host only: the CUDA runtime has no device top-k yet

grove.param @w : tensor<8xf32>
func.func @step(%g: tensor<8xf32>) {
  grove.sgd [@w] (%g) {lr = 0.1 : f64} : tensor<8xf32>
  return
}

// -----

// Nothing to make data-parallel.
// expected-error @+1 {{grove-insert-collectives: no optimizer in the module, so nothing to make data-parallel (the pass runs before grove-expand-training-ops)}}
module {
  func.func @forward(%x: tensor<8xf32>) -> tensor<8xf32> {
    return %x : tensor<8xf32>
  }
}

// -----

// A rank that skipped a step would count apart from the others.
grove.param @w : tensor<8xf32>
func.func @skip(%g: tensor<8xf32>) {
  // expected-error @+1 {{'grove.adaalter' op with skip_nonfinite cannot take local steps: a rank that skips a step would count steps apart from the others and miss their synchronisation}}
  grove.adaalter [@w] (%g) {period = 2, skip_nonfinite} : tensor<8xf32>
  return
}

// -----

// Master copies would miss the averaging.
grove.param @w : tensor<8xbf16>
func.func @master(%g: tensor<8xbf16>) {
  // expected-error @+1 {{'grove.adaalter' op with master_weights cannot take local steps: the averaging would reach the rounded params, not the master copies the next step reads}}
  grove.adaalter [@w] (%g) {period = 2, master_weights} : tensor<8xbf16>
  return
}

// -----

// Local AdaAlter's averages are dense: the compressor asked for is named
// unused, not dropped without a word.
grove.param @w : tensor<8xf32>
func.func @local(%g: tensor<8xf32>) {
  // expected-warning @+1 {{Local AdaAlter (period 4) averages its params and accumulators uncompressed: the compressor and error options do not apply to it}}
  grove.adaalter [@w] (%g) {period = 4} : tensor<8xf32>
  return
}

// -----

// The counter is read in the entry block and counted before the return.
grove.param @w : tensor<8xf32>
func.func @blocks(%g: tensor<8xf32>) {
  cf.br ^next
^next:
  // expected-error @+1 {{'grove.sgd' op must be in a function of one block to be made data-parallel}}
  grove.sgd [@w] (%g) {lr = 0.1 : f64} : tensor<8xf32>
  return
}

// -----

// The counter's name taken by a param of another type.
grove.param @w : tensor<8xf32>
grove.param @collectives.step : tensor<f32> = 0.0 : f32
func.func @clash(%g: tensor<8xf32>) {
  // expected-error @+1 {{'grove.sgd' op needs state @collectives.step of type 'tensor<i64>', declared as 'tensor<f32>'}}
  grove.sgd [@w] (%g) {lr = 0.1 : f64} : tensor<8xf32>
  return
}
