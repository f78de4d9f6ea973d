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
void populateDataMovementPatterns(RewritePatternSet &patterns);
/// `convPerImage`: im2col convolutions loop over the batch (see the
/// conv-per-image option of convert-grove-to-linalg).
/// `convLibrary`: f32 convolutions (except 1x1 GEMMs) as linalg's named
/// convolutions for convert-linalg-to-blas's library call (see NN.cpp);
/// `convLibraryLowPrecision`: f16 and bf16 ones too.
void populateNNPatterns(RewritePatternSet &patterns, bool convPerImage,
                        bool convLibrary, bool convLibraryLowPrecision);
/// `fcGemms`: the FCs of one-group f32 split attention are GEMMs, small ones
/// at every batch, the others from batch 2 on (see SplitAttention.cpp).
void populateSplitAttentionPatterns(RewritePatternSet &patterns, bool fcGemms);

} // namespace mlir::grove

#endif // GROVE_LIB_CONVERSION_GROVETOLINALG_POPULATEPATTERNS_H
