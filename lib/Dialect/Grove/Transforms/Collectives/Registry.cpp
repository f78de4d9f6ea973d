//===- Registry.cpp - The compressors and strategies, listed once ---------===//
//
// A new compressor is a file of this folder implementing Compressor and one
// line here; grove-insert-collectives, its option's help, the cost model
// and grovec's validation find it through this list.
//
//===----------------------------------------------------------------------===//

#include "Compressor.h"

using namespace mlir;
using namespace mlir::grove;

namespace {
template <typename T> struct Owned {
  std::vector<std::unique_ptr<T>> owners;
  std::vector<const T *> views;
  void add(std::unique_ptr<T> item) {
    views.push_back(item.get());
    owners.push_back(std::move(item));
  }
};

const Owned<Compressor> &compressors() {
  static const Owned<Compressor> list = [] {
    Owned<Compressor> l;
    l.add(createDenseCompressor());
    l.add(createHalfCompressor(/*bf16=*/false));
    l.add(createHalfCompressor(/*bf16=*/true));
    l.add(createRandomBlockCompressor());
    l.add(createRandKCompressor());
    l.add(createTopKCompressor());
    l.add(createSignCompressor());
    l.add(createPowerSGDCompressor());
    l.add(createInt8Compressor());
    return l;
  }();
  return list;
}

const Owned<SyncStrategy> &strategies() {
  static const Owned<SyncStrategy> list = [] {
    Owned<SyncStrategy> l;
    l.add(createLocalAdaAlterStrategy());
    l.add(createModelBlocksStrategy());
    l.add(createGradientAveragingStrategy());
    return l;
  }();
  return list;
}
} // namespace

ArrayRef<const Compressor *> mlir::grove::getCompressors() {
  return compressors().views;
}

const Compressor *mlir::grove::lookupCompressor(StringRef name) {
  for (const Compressor *c : getCompressors())
    if (c->getName() == name)
      return c;
  return nullptr;
}

std::string mlir::grove::listCompressorNames(
    llvm::function_ref<bool(const Compressor &)> filter) {
  SmallVector<StringRef> names;
  for (const Compressor *c : getCompressors())
    if (!filter || filter(*c))
      names.push_back(c->getName());
  std::string text;
  for (auto [i, name] : llvm::enumerate(names)) {
    if (i)
      text += i + 1 == names.size() ? " or " : ", ";
    text += name;
  }
  return text;
}

ArrayRef<const SyncStrategy *> mlir::grove::getSyncStrategies() {
  return strategies().views;
}
