//===- WeightsCheck.cpp - Check a weights file as the runtime will --------===//
//
// One validator for safetensors files: grovec borrows the runtime's (through
// its public C API) instead of keeping a second implementation that could
// disagree with what the library accepts at load time.
//
//===----------------------------------------------------------------------===//

#include "WeightsCheck.h"

#include "grove/runtime.h"

#include <vector>

using namespace mlir;

/// Entry slots the check never calls; the runtime only requires non-null.
static void unusedEntry(void **) {}

LogicalResult
mlir::grove::checkWithRuntime(const ::grove::schema::ModelDesc &model,
                              llvm::StringRef path, std::string &error) {
  // Checking signatures and weights needs no device: validate a device
  // model as the host runtime sees it.
  ::grove::schema::ModelDesc onHost = model;
  onHost.target = "host";
  std::string name = model.module;
  std::string text = ::grove::schema::printModelDescriptor(onHost);
  auto numEntries = static_cast<uint32_t>(model.entries.size());
  std::vector<grove_packed_fn> entries(numEntries, &unusedEntry);
  grove_model_def def = {GROVE_ABI_VERSION, numEntries, name.c_str(),
                         text.c_str(), entries.data()};
  grove_context *ctx = nullptr;
  if (grove_context_create(&def, &ctx) != GROVE_OK) {
    error = std::string("internal: the runtime rejects the model "
                        "descriptor: ") +
            grove_last_error();
    return failure();
  }
  if (path.empty()) {
    grove_context_destroy(ctx);
    return success();
  }
  std::string file = path.str();
  grove_status status = grove_context_load_weights(ctx, file.c_str());
  if (status != GROVE_OK) {
    // The runtime names its own call; grovec names the file instead.
    llvm::StringRef message = grove_last_error();
    std::string origin = "grove_context_load_weights('" + file + "'): ";
    message.consume_front(origin);
    error = "invalid weights '" + file + "': " + message.str();
  }
  grove_context_destroy(ctx);
  return success(status == GROVE_OK);
}
