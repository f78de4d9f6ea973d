//===- CNames.h - What the generated C header can spell --------*- C++ -*-===//
//
// Shared by grove-prepare-abi (which names entry points and parameters) and
// grovec (which names the library), so both accept the same names.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_SUPPORT_CNAMES_H
#define GROVE_SUPPORT_CNAMES_H

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::grove {

/// True for `[A-Za-z_][A-Za-z0-9_]*`.
inline bool isCIdentifier(llvm::StringRef s) {
  return !s.empty() && (llvm::isAlpha(s[0]) || s[0] == '_') &&
         llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

} // namespace mlir::grove

#endif // GROVE_SUPPORT_CNAMES_H
