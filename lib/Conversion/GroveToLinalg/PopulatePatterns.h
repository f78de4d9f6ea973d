//===- PopulatePatterns.h - grove-to-linalg pattern families ----*- C++ -*-===//
//
// One populate function per op family, each in its own file.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_LIB_CONVERSION_GROVETOLINALG_POPULATEPATTERNS_H
#define GROVE_LIB_CONVERSION_GROVETOLINALG_POPULATEPATTERNS_H

#include "mlir/Transforms/DialectConversion.h"

namespace mlir::grove {

void populateElementwisePatterns(RewritePatternSet &patterns);
void populateContractionPatterns(RewritePatternSet &patterns);
void populateReductionPatterns(RewritePatternSet &patterns);
void populateDataMovementPatterns(RewritePatternSet &patterns,
                                  bool segmentSumRows);
void populateCollectivePatterns(RewritePatternSet &patterns);
void populateGeneralOpPatterns(RewritePatternSet &patterns);
void populateTransformerPatterns(RewritePatternSet &patterns);
/// How convolutions lower (the conv-* options of convert-grove-to-linalg).
struct ConvLowering {
  /// im2col convolutions loop over the batch.
  bool perImage = false;
  /// f32 convolutions (except 1x1 GEMMs) as linalg's named convolutions for
  /// convert-linalg-to-blas's library call (see NN.cpp).
  bool library = false;
  /// With `library`, f16 and bf16 ones too.
  bool libraryLowPrecision = false;
  /// f32 convolutions whose output has at most this many positions per
  /// channel (Oh·Ow) take the library form as well; 0: none.
  int64_t libraryMaxPositions = 0;
  /// f32 convolutions whose weights are state the entry only reads take the
  /// library form at any size: the library keeps such weights prepared.
  bool libraryReadOnlyWeights = false;
  /// f32 weight gradients as the generic convert-linalg-to-blas turns into
  /// the runtime's weight-gradient service (else im2col + one GEMM).
  bool weightGradLibrary = false;
  /// Pool gradients on static images by stride phases (NN.cpp), not as one
  /// gather an input element.
  bool poolGradPhases = false;
};
void populateNNPatterns(RewritePatternSet &patterns, const ConvLowering &conv);
/// `fcGemms`: the FCs of one-group f32 split attention are GEMMs, small ones
/// at every batch, the others from batch 2 on (see SplitAttention.cpp).
/// Adds split_attention_grad's lowering too.
void populateSplitAttentionPatterns(RewritePatternSet &patterns, bool fcGemms);
void populateSplitAttentionGradPatterns(RewritePatternSet &patterns,
                                        bool fcGemms);

} // namespace mlir::grove

#endif // GROVE_LIB_CONVERSION_GROVETOLINALG_POPULATEPATTERNS_H
