//===- WeightsIO.cpp - Loading and saving safetensors weights -------------===//
//
// Loading reads and validates the whole header, then copies every tensor into
// a fresh arena, and only then swaps it into the context: any failure before
// the swap leaves the context exactly as it was.
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include "DType.h"
#include "Error.h"
#include "Safetensors.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/stat.h>
#include <unistd.h>

using namespace grove::rt;

namespace {

/// Random-access byte source: a file or a memory image.
class Source {
public:
  virtual ~Source() = default;
  virtual uint64_t size() const = 0;
  /// Reads exactly `n` bytes at `offset` (caller guarantees the range lies
  /// within size()).
  virtual grove_status read(uint64_t offset, void *dst, size_t n) = 0;
};

class MemorySource final : public Source {
public:
  MemorySource(const void *data, size_t size)
      : data(static_cast<const uint8_t *>(data)), bytes(size) {}
  uint64_t size() const override { return bytes; }
  grove_status read(uint64_t offset, void *dst, size_t n) override {
    if (n)
      std::memcpy(dst, data + offset, n);
    return GROVE_OK;
  }

private:
  const uint8_t *data;
  size_t bytes;
};

class FileSource final : public Source {
public:
  FileSource(int fd, uint64_t size, std::string origin)
      : fd(fd), bytes(size), origin(std::move(origin)) {}
  ~FileSource() override { ::close(fd); }
  uint64_t size() const override { return bytes; }
  grove_status read(uint64_t offset, void *dst, size_t n) override {
    auto *out = static_cast<uint8_t *>(dst);
    while (n > 0) {
      // pread caps single transfers at about 2 GiB on Linux; loop regardless.
      ssize_t got = ::pread(fd, out, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        return fail(GROVE_ERROR_IO,
                    origin + ": read failed: " + std::strerror(errno));
      if (got == 0)
        return fail(GROVE_ERROR_IO,
                    origin + ": file shrank while reading (unexpected EOF)");
      out += got;
      offset += static_cast<uint64_t>(got);
      n -= static_cast<size_t>(got);
    }
    return GROVE_OK;
  }

private:
  int fd;
  uint64_t bytes;
  std::string origin;
};

grove_status loadFrom(grove_context &ctx, Source &src,
                      const std::string &origin) {
  const uint64_t total = src.size();
  if (total < 8)
    return fail(GROVE_ERROR_BAD_WEIGHTS,
                origin + ": " + std::to_string(total) +
                    " bytes is too short for a safetensors file (needs an "
                    "8-byte header length)");
  uint8_t lengthBytes[8];
  if (grove_status s = src.read(0, lengthBytes, 8))
    return s;
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = (headerLen << 8) | lengthBytes[i];
  if (headerLen > kMaxSafetensorsHeader)
    return fail(GROVE_ERROR_BAD_WEIGHTS,
                origin + ": header length " + std::to_string(headerLen) +
                    " exceeds the " + std::to_string(kMaxSafetensorsHeader) +
                    "-byte limit");
  if (headerLen > total - 8)
    return fail(GROVE_ERROR_BAD_WEIGHTS,
                origin + ": header length " + std::to_string(headerLen) +
                    " is larger than the rest of the file (" +
                    std::to_string(total - 8) + " bytes)");
  std::string header(headerLen, '\0');
  if (grove_status s = src.read(8, header.data(), header.size()))
    return s;

  const uint64_t dataStart = 8 + headerLen;
  std::vector<StTensor> tensors;
  if (grove_status s =
          parseSafetensorsHeader(header, total - dataStart, origin, tensors))
    return s;
  std::vector<size_t> tensorOfParam;
  if (grove_status s =
          matchParams(ctx.desc.params, tensors, origin, tensorOfParam))
    return s;

  Buffer arena = newArena(ctx);
  if (!arena)
    return fail(GROVE_ERROR_OUT_OF_MEMORY, origin + ": cannot allocate " +
                                               std::to_string(ctx.arenaBytes) +
                                               " bytes of weights");
  // Initialised state the file omits keeps the initialiser newArena wrote.
  for (size_t i = 0; i < ctx.desc.params.size(); ++i) {
    if (tensorOfParam[i] == kNotInFile)
      continue;
    const StTensor &t = tensors[tensorOfParam[i]];
    if (grove_status s =
            src.read(dataStart + t.begin, arena.get() + ctx.slots[i].offset,
                     ctx.slots[i].bytes))
      return s;
  }
  std::unique_lock<std::shared_mutex> exclusive(ctx.stateLock);
  if (grove_status s = adoptArena(ctx, std::move(arena), /*weightsToo=*/true)) {
    std::string message = grove_last_error();
    return fail(s, origin + ": " + message);
  }
  return GROVE_OK;
}

grove_status loadFile(grove_context *ctx, const char *path) {
  if (!ctx || !path)
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_context_load_weights: ctx or path is NULL");
  const std::string origin =
      "grove_context_load_weights('" + std::string(path) + "')";
  // O_NONBLOCK so that opening a FIFO cannot hang; regular files ignore it.
  int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return fail(GROVE_ERROR_IO,
                origin + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return fail(GROVE_ERROR_IO,
                origin + ": cannot stat: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(GROVE_ERROR_IO,
                origin + (S_ISDIR(st.st_mode) ? ": is a directory"
                                              : ": is not a regular file"));
  }
  FileSource src(fd, static_cast<uint64_t>(st.st_size), origin);
  return loadFrom(*ctx, src, origin);
}

grove_status loadMemory(grove_context *ctx, const void *data, size_t size) {
  const std::string origin = "grove_context_load_weights_from_memory";
  if (!ctx || (!data && size > 0))
    return fail(GROVE_ERROR_INVALID_ARGUMENT, origin + ": ctx or data is NULL");
  MemorySource src(data, size);
  return loadFrom(*ctx, src, origin);
}

/// write() all of `n` bytes, retrying on EINTR and short writes.
bool writeAll(int fd, const uint8_t *data, size_t n) {
  while (n > 0) {
    ssize_t put = ::write(fd, data, n);
    if (put < 0 && errno == EINTR)
      continue;
    if (put <= 0)
      return false;
    data += put;
    n -= static_cast<size_t>(put);
  }
  return true;
}

/// Where a save to `path` renames its temporary: `path` itself when it does
/// not exist or is a regular file, the file a symbolic link names (so that
/// the link stays). Anything else - a device, a FIFO, a socket, a directory
/// - is refused: renaming over it would replace it, and /dev/null would
/// become a regular file.
grove_status saveDestination(const char *path, const std::string &origin,
                             std::string &target) {
  target = path;
  struct stat st;
  if (::lstat(path, &st) != 0)
    return errno == ENOENT
               ? GROVE_OK
               : fail(GROVE_ERROR_IO,
                      origin + ": cannot stat: " + std::strerror(errno));
  if (S_ISLNK(st.st_mode)) {
    char *resolved = ::realpath(path, nullptr);
    if (!resolved)
      return fail(GROVE_ERROR_IO, origin +
                                      ": cannot resolve the symbolic link: " +
                                      std::strerror(errno));
    target = resolved;
    std::free(resolved);
    if (::stat(target.c_str(), &st) != 0)
      return fail(GROVE_ERROR_IO, origin + ": cannot stat '" + target +
                                      "': " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode))
    return fail(GROVE_ERROR_IO,
                origin + (S_ISDIR(st.st_mode)
                              ? ": is a directory"
                              : ": exists and is not a regular file (a "
                                "device, FIFO or socket); refusing to "
                                "replace it"));
  return GROVE_OK;
}

grove_status saveFile(const grove_context *ctx, const char *path) {
  if (!ctx || !path)
    return fail(GROVE_ERROR_INVALID_ARGUMENT,
                "grove_context_save_weights: ctx or path is NULL");
  const std::string origin =
      "grove_context_save_weights('" + std::string(path) + "')";
  for (size_t i = 0; i < ctx->desc.params.size(); ++i)
    if (!ctx->paramSet[i])
      return fail(GROVE_ERROR_BAD_WEIGHTS, origin + ": param '" +
                                               ctx->desc.params[i].name +
                                               "' has not been set");
  std::string target;
  if (grove_status s = saveDestination(path, origin, target))
    return s;
  std::shared_lock<std::shared_mutex> shared(ctx->stateLock);
  std::string prefix;
  if (grove_status s = buildSafetensorsHeader(
          ctx->desc.params, {{"grove_module", ctx->desc.module}}, prefix)) {
    std::string message = grove_last_error();
    return fail(s, origin + ": " + message);
  }

  // A device model's weights may have been written through device views:
  // save what the device holds.
  Buffer fromDevice;
  const uint8_t *base = ctx->arena.get();
  if (ctx->device) {
    fromDevice = allocateBuffer(ctx->arenaBytes);
    if (!fromDevice)
      return fail(GROVE_ERROR_OUT_OF_MEMORY,
                  origin + ": cannot allocate " +
                      std::to_string(ctx->arenaBytes) + " bytes");
    if (grove_status s =
            ctx->device->downloadWeights(fromDevice.get(), ctx->arenaBytes)) {
      std::string message = grove_last_error();
      return fail(s, origin + ": " + message);
    }
    base = fromDevice.get();
  }

  // Unique temporary name in the target's directory (rename is only atomic
  // within one file system). O_EXCL guards against a stale file of that name.
  static std::atomic<unsigned> counter{0};
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = target + ".tmp." + std::to_string(::getpid()) + "." +
          std::to_string(counter++);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0)
    return fail(GROVE_ERROR_IO, origin + ": cannot create temporary file '" +
                                    tmp + "': " + std::strerror(errno));

  bool ok = writeAll(fd, reinterpret_cast<const uint8_t *>(prefix.data()),
                     prefix.size());
  for (size_t i = 0; ok && i < ctx->desc.params.size(); ++i)
    ok = writeAll(fd, base + ctx->slots[i].offset, ctx->slots[i].bytes);
  // fsync so that the rename never publishes a file whose data is not on
  // disk yet.
  ok = ok && ::fsync(fd) == 0;
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::rename(tmp.c_str(), target.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    return fail(GROVE_ERROR_IO, origin + ": " + std::strerror(err));
  }
  return GROVE_OK;
}

} // namespace

extern "C" {

GROVE_API grove_status grove_context_load_weights(grove_context *ctx,
                                                  const char *path) {
  return guarded("grove_context_load_weights",
                 [&] { return loadFile(ctx, path); });
}

GROVE_API grove_status grove_context_load_weights_from_memory(
    grove_context *ctx, const void *data, size_t size) {
  return guarded("grove_context_load_weights_from_memory",
                 [&] { return loadMemory(ctx, data, size); });
}

GROVE_API grove_status grove_context_save_weights(const grove_context *ctx,
                                                  const char *path) {
  return guarded("grove_context_save_weights",
                 [&] { return saveFile(ctx, path); });
}

} // extern "C"
