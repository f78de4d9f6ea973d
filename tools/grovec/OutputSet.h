//===- OutputSet.h - All-or-nothing output files for grovec -----*- C++ -*-===//
//
// Every output is first written to a temporary file in the output directory
// and only renamed into place once all of them were written, so a failed run
// never leaves half a library next to the user's files.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_TOOLS_GROVEC_OUTPUTSET_H
#define GROVE_TOOLS_GROVEC_OUTPUTSET_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir::grove {

class OutputSet {
public:
  explicit OutputSet(llvm::StringRef dir) : dir(dir.str()) {}

  /// Creates the output directory; fails if it cannot be created or is not
  /// a directory.
  LogicalResult prepare(std::string &error);

  /// Queues `contents` for `<dir>/<name>`.
  void add(llvm::StringRef name, std::string contents) {
    files.emplace_back(name.str(), std::move(contents));
  }

  /// Writes every file to a temporary and renames them all into place;
  /// prints an error and removes the temporaries on failure.
  bool commit();

private:
  std::string dir;
  std::vector<std::pair<std::string, std::string>> files;
};

} // namespace mlir::grove

#endif // GROVE_TOOLS_GROVEC_OUTPUTSET_H
