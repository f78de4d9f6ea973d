//===- InputFile.h - Reading a model for the parser, bounded ----*- C++ -*-===//
//
// grovec and grove-opt read their input through this: a regular file or
// standard input, of bounded size and bracket nesting, so that /dev/zero,
// a FIFO or a file of 30,000 nested modules gets a diagnostic instead of
// an out-of-memory abort or a stack overflow in the (recursive) parser.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_SUPPORT_INPUTFILE_H
#define GROVE_SUPPORT_INPUTFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace mlir::grove {

/// The largest input read: far above any model's text (weights live in
/// safetensors files).
constexpr uint64_t kMaxInputBytes = uint64_t(1) << 30;

/// The deepest nesting of `{ [ ( <` accepted; MLIR's parser recurses once
/// per level and overflows an 8 MiB stack at about 10,000.
constexpr unsigned kMaxInputNesting = 1000;

/// Reads `path` ("-": standard input). On failure returns null and sets
/// `error`: a message, or for a nesting too deep a whole located diagnostic
/// (`path:line:col: error: ...`), and then `located`.
std::unique_ptr<llvm::MemoryBuffer>
readModelInput(llvm::StringRef path, std::string &error, bool &located);

/// The first place `text` nests deeper than `limit`, as (line, column),
/// 1-based; (0, 0) when it does not. Strings and `//` comments do not count,
/// nor the `>` of `->`.
std::pair<unsigned, unsigned> findExcessiveNesting(llvm::StringRef text,
                                                   unsigned limit);

} // namespace mlir::grove

#endif // GROVE_SUPPORT_INPUTFILE_H
