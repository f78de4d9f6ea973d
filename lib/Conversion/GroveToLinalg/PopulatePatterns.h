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
void populateNNPatterns(RewritePatternSet &patterns, bool convPerImage);
/// `fcGemms`: the FCs of one-group f32 split attention are GEMMs from batch 2
/// on (see SplitAttention.cpp).
void populateSplitAttentionPatterns(RewritePatternSet &patterns, bool fcGemms);

} // namespace mlir::grove

#endif // GROVE_LIB_CONVERSION_GROVETOLINALG_POPULATEPATTERNS_H
