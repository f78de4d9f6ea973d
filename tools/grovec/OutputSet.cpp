//===- OutputSet.cpp - All-or-nothing output files for grovec -------------===//

#include "OutputSet.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::grove;

LogicalResult OutputSet::prepare(std::string &error) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    error = "cannot create output directory '" + dir + "': " + ec.message();
    return failure();
  }
  if (!llvm::sys::fs::is_directory(dir)) {
    error = "output path '" + dir + "' is not a directory";
    return failure();
  }
  return success();
}

bool OutputSet::commit() {
  std::vector<std::string> temps;
  auto cleanup = [&]() {
    for (const std::string &t : temps)
      llvm::sys::fs::remove(t);
  };
  for (const auto &[name, contents] : files) {
    llvm::SmallString<256> model(dir);
    llvm::sys::path::append(model, "." + name + ".tmp-%%%%%%");
    int fd;
    llvm::SmallString<256> temp;
    if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, temp)) {
      llvm::WithColor::error(llvm::errs(), "grovec")
          << "cannot write to '" << dir << "': " << ec.message() << "\n";
      cleanup();
      return false;
    }
    temps.push_back(temp.str().str());
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << contents;
    os.close();
    if (os.has_error()) {
      llvm::WithColor::error(llvm::errs(), "grovec")
          << "cannot write '" << temp << "': " << os.error().message() << "\n";
      os.clear_error();
      cleanup();
      return false;
    }
  }
  // Move what the user had aside, put the new files in place, and only then
  // drop the old ones; any failure puts everything back as it was.
  struct Placed {
    std::string path, backup; // backup empty: nothing was there before
  };
  std::vector<Placed> placed;
  auto rollback = [&]() {
    for (const Placed &p : llvm::reverse(placed)) {
      if (p.backup.empty())
        llvm::sys::fs::remove(p.path);
      else
        llvm::sys::fs::rename(p.backup, p.path);
    }
    cleanup();
  };
  for (auto [i, file] : llvm::enumerate(files)) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, file.first);
    Placed p{path.str().str(), ""};
    if (llvm::sys::fs::exists(path) && !llvm::sys::fs::is_directory(path)) {
      llvm::SmallString<256> model(dir);
      llvm::sys::path::append(model, "." + file.first + ".old-%%%%%%");
      llvm::SmallString<256> backup;
      llvm::sys::fs::createUniquePath(model, backup, /*MakeAbsolute=*/false);
      if (std::error_code ec = llvm::sys::fs::rename(path, backup)) {
        llvm::WithColor::error(llvm::errs(), "grovec")
            << "cannot replace '" << path << "': " << ec.message() << "\n";
        rollback();
        return false;
      }
      p.backup = backup.str().str();
    }
    if (std::error_code ec = llvm::sys::fs::rename(temps[i], path)) {
      llvm::WithColor::error(llvm::errs(), "grovec")
          << "cannot create '" << path << "': " << ec.message() << "\n";
      if (!p.backup.empty())
        llvm::sys::fs::rename(p.backup, p.path);
      rollback();
      return false;
    }
    placed.push_back(p);
  }
  for (const Placed &p : placed)
    if (!p.backup.empty())
      llvm::sys::fs::remove(p.backup);
  return true;
}
