//===- ModelSchema.h - The model descriptor, one definition ---*- C++ -*-===//
//
// The text descriptor embedded in every generated library (docs/abi.md) is
// written by the compiler (grove-prepare-abi), read back by grovec for the C
// header and the weights check, and read by the runtime. All three use this
// one definition, so the format cannot drift between them. Plain C++17 with
// no dependency but dlpack.h: the runtime links it as it is, and so does the
// compiler (built without exceptions or RTTI, which this code never uses).
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_SCHEMA_MODELSCHEMA_H
#define GROVE_SCHEMA_MODELSCHEMA_H

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace grove::schema {

/// Version on the descriptor's first line (`grove-model 5`).
constexpr int64_t kDescriptorVersion = 5;
/// Upper bound on tensor rank, shared by the dialect's verifier and the
/// runtime; keeps descriptor sizes and loops bounded.
constexpr int64_t kMaxRank = 64;
/// Upper bound on an entry's argument and result counts.
constexpr int64_t kMaxEntryTensors = 65535;
/// DLPack's bool code (kDLBool in dlpack.h 0.8+; Debian 12 ships 0.6).
constexpr uint8_t kDLBoolCode = 6;

/// An entry input's dynamic dimension `dim` must equal dimension
/// `otherDim` of the entry's earlier input `other` (a batch of images and
/// its labels), checked before the entry runs.
struct DimEquality {
  int64_t dim = 0;
  int64_t other = 0;
  int64_t otherDim = 0;
  bool operator==(const DimEquality &o) const {
    return dim == o.dim && other == o.other && otherDim == o.otherDim;
  }
};

struct TensorDesc {
  std::string name;
  DLDataType dtype{};
  std::vector<int64_t> shape; // -1 = dynamic (entry inputs and outputs only)
  /// Integer entry inputs: every value must lie in [0, below) (labels,
  /// token ids), checked before the entry runs; 0: unchecked.
  int64_t below = 0;
  /// Entry inputs: dimensions the generated code assumes equal to an
  /// earlier input's.
  std::vector<DimEquality> equalDims;
  /// Entry inputs that are a forest's child offsets (docs/trees.md): the
  /// inputs holding its children and its roots, and the most children a
  /// node may have (0: any). The runtime validates the forest before the
  /// entry runs. -1: not a forest.
  int64_t forestChildren = -1;
  int64_t forestRoots = -1;
  int64_t forestArity = 0;
  /// Entry inputs with one row per node of a forest: the input holding its
  /// child offsets, whose dimension 0 is one more than this one's. -1: none.
  int64_t nodesOf = -1;
  bool isForest() const { return forestChildren >= 0; }
};

/// What fills a piece of module state before anything is loaded.
enum class StateKind : uint8_t {
  /// Weights: given by a weights file or set_weight before any call.
  Weight,
  /// Mutable state with an initialiser (optimizer moments, step counters,
  /// running statistics, compression residuals): every element starts as
  /// `initBits`, and a weights file may omit it.
  Initialized,
};

/// One `grove.param`: a named, statically shaped tensor the context owns.
struct StateDesc : TensorDesc {
  StateKind kind = StateKind::Weight;
  /// Initialized state: the raw bits of one element (little end first, the
  /// element's width), e.g. 0x3f800000 for an f32 1.0.
  uint64_t initBits = 0;
};

/// How an entry uses a piece of state it is handed.
enum class Access : uint8_t { Read, Write };

/// One argument of a packed entry function, in the function's order: either
/// a piece of state (the context passes its buffer) or an entry input.
struct ArgDesc {
  bool isState = false;
  size_t index = 0; // into ModelDesc::params, or into EntryDesc::inputs
  Access access = Access::Read;
};

struct EntryDesc {
  std::string name;
  std::vector<ArgDesc> args;
  std::vector<TensorDesc> inputs;
  std::vector<TensorDesc> outputs;

  /// Whether a call writes context state (and so runs exclusively).
  bool writesState() const;
};

struct ModelDesc {
  std::string module;
  std::string target = "host";    // "host" or "cuda"
  std::vector<StateDesc> params;  // declaration order
  std::vector<EntryDesc> entries; // descriptor order == entry table order
};

enum class ParseStatus { Ok, Invalid, VersionMismatch };

struct ParseResult {
  ParseStatus status = ParseStatus::Ok;
  size_t line = 0; // 1-based; 0 when the defect is not on one line
  std::string message;
  explicit operator bool() const { return status != ParseStatus::Ok; }
};

/// Parses descriptor `text` strictly (docs/abi.md): anything unexpected is
/// a mismatched or corrupted model and is reported, never guessed at.
ParseResult parseModelDescriptor(std::string_view text, ModelDesc &out);

/// The descriptor text of `model`; parseModelDescriptor reads it back equal.
std::string printModelDescriptor(const ModelDesc &model);

/// Descriptor spelling (`f32`) to DLPack type; false if unknown.
bool dtypeFromToken(std::string_view token, DLDataType &out);
/// DLPack type to descriptor spelling; nullptr if it has none.
const char *dtypeToken(DLDataType type);
/// Bytes per element of a descriptor type (all are whole bytes).
inline size_t elementBytes(DLDataType type) {
  return (static_cast<size_t>(type.bits) * type.lanes + 7) / 8;
}

/// Whether `name` can name state, an entry, an input or an output: printable
/// ASCII other than space, or well-formed UTF-8 (names become safetensors
/// JSON keys, which must be valid UTF-8).
bool isValidName(std::string_view name);

/// Keys a safetensors header reserves (`__metadata__`): no state may be
/// named so, or its saved file could never be loaded.
bool isReservedStateName(std::string_view name);

} // namespace grove::schema

#endif // GROVE_SCHEMA_MODELSCHEMA_H
