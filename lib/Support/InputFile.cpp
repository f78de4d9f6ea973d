//===- InputFile.cpp - Reading a model for the parser, bounded ------------===//

#include "grove/Support/InputFile.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Process.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::grove;

std::pair<unsigned, unsigned>
mlir::grove::findExcessiveNesting(llvm::StringRef text, unsigned limit) {
  unsigned depth = 0, line = 1, column = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    ++column;
    if (c == '\n') {
      ++line;
      column = 0;
      inString = false; // MLIR strings do not span lines
      continue;
    }
    if (inString) {
      if (c == '\\')
        ++i, ++column;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      size_t end = text.find('\n', i);
      if (end == llvm::StringRef::npos)
        break;
      column += end - i - 1;
      i = end - 1;
    } else if (c == '{' || c == '[' || c == '(' || c == '<') {
      if (++depth > limit)
        return {line, column};
    } else if (c == '}' || c == ']' || c == ')' ||
               (c == '>' && (i == 0 || text[i - 1] != '-'))) {
      if (depth > 0)
        --depth;
    }
  }
  return {0, 0};
}

/// Reads at most kMaxInputBytes + 1 bytes from `fd`.
static bool readBounded(int fd, std::string &out) {
  char chunk[1 << 16];
  while (out.size() <= kMaxInputBytes) {
    ssize_t got = ::read(fd, chunk, sizeof(chunk));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return false;
    if (got == 0)
      return true;
    out.append(chunk, static_cast<size_t>(got));
  }
  return true;
}

std::unique_ptr<llvm::MemoryBuffer>
mlir::grove::readModelInput(llvm::StringRef path, std::string &error,
                            bool &located) {
  located = false;
  std::string name = path == "-" ? "<stdin>" : path.str();
  int fd = 0;
  if (path != "-") {
    // O_NONBLOCK: opening a FIFO must not wait for a writer.
    fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      error = "cannot open input file '" + name + "': " + std::strerror(errno);
      return nullptr;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      error = S_ISDIR(st.st_mode)
                  ? "cannot open input file '" + name + "': Is a directory"
                  : "input '" + name + "' is not a regular file";
      return nullptr;
    }
    if (static_cast<uint64_t>(st.st_size) > kMaxInputBytes) {
      ::close(fd);
      error = "input '" + name + "' is larger than " +
              std::to_string(kMaxInputBytes >> 20) + " MiB";
      return nullptr;
    }
    // Blocking reads from here on (a regular file never blocks long).
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  }
  std::string text;
  bool ok = readBounded(fd, text);
  int err = errno;
  if (fd != 0)
    ::close(fd);
  if (!ok) {
    error = "cannot read '" + name + "': " + std::strerror(err);
    return nullptr;
  }
  if (text.size() > kMaxInputBytes) {
    error = "input '" + name + "' is larger than " +
            std::to_string(kMaxInputBytes >> 20) + " MiB";
    return nullptr;
  }
  auto [line, column] = findExcessiveNesting(text, kMaxInputNesting);
  if (line) {
    error = name + ":" + std::to_string(line) + ":" + std::to_string(column) +
            ": error: nesting deeper than " + std::to_string(kMaxInputNesting) +
            " levels; the parser would overflow its stack";
    located = true;
    return nullptr;
  }
  return llvm::MemoryBuffer::getMemBufferCopy(text, name);
}
