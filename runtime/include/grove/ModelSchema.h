//===- ModelSchema.h - The model descriptor, one definition ---*- C++ -*-===//
//
// The descriptor embedded in every generated library (docs/abi.md) is
// written once by the compiler (grove-emit-entry-points, from the typed
// attributes grove-prepare-abi records) as versioned JSON, and read by the
// runtime and by grovec (for the C header and the weights check). All of
// them use this one definition and its one reader, so the format cannot
// drift between them; any other loader reads the JSON on its own. Plain
// C++17 that never throws: the runtime and the compiler (built without
// exceptions or RTTI) link it as it is.
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_MODELSCHEMA_H
#define GROVE_MODELSCHEMA_H

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace grove::schema {

/// The descriptor's `"version"` (JSON; versions up to 5 were text).
constexpr int64_t kDescriptorVersion = 7;
/// The object-file section that holds every linked model's descriptor, each
/// NUL-terminated, for loaders that read a library without running it (a C
/// identifier, so ELF linkers define __start_/__stop_ symbols around it).
constexpr char kDescriptorSection[] = "grove_models";
/// Upper bound on tensor rank, shared by the dialect's verifier and the
/// runtime; keeps descriptor sizes and loops bounded.
constexpr int64_t kMaxRank = 64;
/// Upper bound on an entry's argument and result counts, and on a model's
/// state and entries.
constexpr int64_t kMaxEntryTensors = 65535;
/// Upper bound on one input's preconditions: an equal_dim per dimension and
/// one of each other kind.
constexpr int64_t kMaxPreconditions = kMaxRank + 3;
/// DLPack's bool code (kDLBool in dlpack.h 0.8+; Debian 12 ships 0.6).
constexpr uint8_t kDLBoolCode = 6;

/// Preconditions: relations between an entry's inputs that its generated
/// code assumes, checked by the runtime before the code runs, so a call
/// that breaks one is refused before any state is written. Each kind is
/// one struct here, one JSON object (`"kind"`), one attribute in the
/// compiler (#grove.<kind>) and one check function in the runtime.

/// `below`: every value of an integer input lies in [0, bound) (labels,
/// token ids).
struct BoundPrecondition {
  int64_t bound = 1;
  bool operator==(const BoundPrecondition &o) const { return bound == o.bound; }
};

/// `equal_dim`: the input's dynamic dimension `dim` equals dimension
/// `inputDim` of the entry's earlier input `input` (a batch and its labels).
struct EqualDimPrecondition {
  int64_t dim = 0;
  int64_t input = 0;
  int64_t inputDim = 0;
  bool operator==(const EqualDimPrecondition &o) const {
    return dim == o.dim && input == o.input && inputDim == o.inputDim;
  }
};

/// `forest`: the input holds a forest's child offsets (docs/trees.md); the
/// inputs `children` and `roots` hold the rest of it, and a node has at most
/// `arity` children (0: any). The runtime validates the whole forest.
struct ForestPrecondition {
  int64_t children = 0;
  int64_t roots = 0;
  int64_t arity = 0;
  bool operator==(const ForestPrecondition &o) const {
    return children == o.children && roots == o.roots && arity == o.arity;
  }
};

/// `forest_nodes`: the input has one row per node of the forest whose child
/// offsets are input `offsets` (its dimension 0 is theirs minus one).
struct ForestNodesPrecondition {
  int64_t offsets = 0;
  bool operator==(const ForestNodesPrecondition &o) const {
    return offsets == o.offsets;
  }
};

/// The runtime checks every input's preconditions kind by kind, in this
/// order (sizes before values).
using Precondition = std::variant<EqualDimPrecondition, BoundPrecondition,
                                  ForestPrecondition, ForestNodesPrecondition>;

/// The JSON `"kind"` of a precondition (`below`, `equal_dim`, ...).
const char *preconditionKind(const Precondition &p);

struct TensorDesc {
  std::string name;
  DLDataType dtype{};
  std::vector<int64_t> shape; // -1 = dynamic (entry inputs and outputs only)
  /// Entry inputs only, in the order the compiler found them.
  std::vector<Precondition> preconditions;

  /// The first precondition of kind `P`, or nullptr.
  template <typename P> const P *find() const {
    for (const Precondition &p : preconditions)
      if (const P *found = std::get_if<P>(&p))
        return found;
    return nullptr;
  }
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

/// What an entry exchanges with the other ranks of a data-parallel job:
/// how grove-insert-collectives was configured (its options as a pipeline
/// string; empty when the collectives are the user's own) and each
/// collective op of the entry's code, in program order (`all_reduce mean
/// tensor<2368xf32>`). Ranks agree on both before a call runs
/// (docs/distributed.md, "Agreement"); an entry without ops has nothing to
/// agree on.
struct CollectiveDesc {
  std::string config;
  std::vector<std::string> ops;
  bool empty() const { return config.empty() && ops.empty(); }
  bool operator==(const CollectiveDesc &o) const {
    return config == o.config && ops == o.ops;
  }
};

struct EntryDesc {
  std::string name;
  std::vector<ArgDesc> args;
  std::vector<TensorDesc> inputs;
  std::vector<TensorDesc> outputs;
  CollectiveDesc collectives;

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
  /// Where the defect is, as a path into the JSON document
  /// (`entries[0].inputs[1].shape`); empty when it is the whole document.
  std::string where;
  std::string message;
  explicit operator bool() const { return status != ParseStatus::Ok; }
};

/// Reads descriptor JSON strictly (docs/abi.md): anything unexpected is a
/// mismatched or corrupted model and is reported, never guessed at. Runs
/// validateModel on what it read.
ParseResult parseModelDescriptor(std::string_view text, ModelDesc &out);

/// Checks what the JSON format cannot say: names valid and unique, state
/// arguments naming declared state once each, every input handed once in
/// order, shapes and initial bits that fit their types, and preconditions
/// that name dynamic dimensions and inputs of the right kind.
ParseResult validateModel(const ModelDesc &model);

/// The descriptor JSON of `model`, with one line per state, argument,
/// input and output; parseModelDescriptor reads it back equal.
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

#endif // GROVE_MODELSCHEMA_H
