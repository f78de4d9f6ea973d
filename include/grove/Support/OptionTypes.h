//===- OptionTypes.h - Typed values of pass and pipeline options -*- C++
//-*-===//
//
// The option values whose set is fixed are enums, parsed by the option
// itself (llvm::cl), so that a bad value is refused where the option is
// read, by grove-opt and grovec alike, with the list of the values. Each
// enum's values are listed once (the GROVE_*_VALUES macros below): its
// enumerators, its names, its cl::values and its parser's message come
// from that list. compress-ratio (a number or auto) is a type of its own
// with its own parser for the same reason.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_SUPPORT_OPTIONTYPES_H
#define GROVE_SUPPORT_OPTIONTYPES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>

//   X(ENUM, ENUMERATOR, NAME, DESCRIPTION)
#define GROVE_COMPILE_TARGET_VALUES(X)                                         \
  X(CompileTarget, Host, "host", "the host CPU")                               \
  X(CompileTarget, Cuda, "cuda", "NVIDIA GPUs (CUDA)")
#define GROVE_COMPRESS_ERROR_VALUES(X)                                         \
  X(CompressError, None, "none", "no error is kept")                           \
  X(CompressError, Feedback, "feedback",                                       \
    "EF-SGD: each rank keeps what it did not send for the next step")          \
  X(CompressError, Reset, "reset",                                             \
    "CSER: local steps, random model blocks averaged")
#define GROVE_TREE_BATCHING_VALUES(X)                                          \
  X(TreeBatching, Levels, "levels", "one cell call per level")                 \
  X(TreeBatching, LevelsByArity, "levels-by-arity",                            \
    "one cell call per level and arity")                                       \
  X(TreeBatching, Nodes, "nodes", "one cell call per node (the reference)")

#define GROVE_OPTION_ENUMERATOR(ENUM, E, NAME, DESC) E,
#define GROVE_OPTION_NAME_CASE(ENUM, E, NAME, DESC)                            \
  case ENUM::E:                                                                \
    return NAME;
#define GROVE_OPTION_CL_VALUE(ENUM, E, NAME, DESC)                             \
  clEnumValN(ENUM::E, NAME, DESC),

namespace mlir::grove {

/// The target a model is compiled for.
enum class CompileTarget {
  GROVE_COMPILE_TARGET_VALUES(GROVE_OPTION_ENUMERATOR)
};
/// What error a compressed collective leaves, and what is done with it
/// (grove-insert-collectives' `error`).
enum class CompressError {
  GROVE_COMPRESS_ERROR_VALUES(GROVE_OPTION_ENUMERATOR)
};
/// How grove.tree_fold's nodes are grouped (grove-batch-dynamic-trees).
enum class TreeBatching { GROVE_TREE_BATCHING_VALUES(GROVE_OPTION_ENUMERATOR) };

#define GROVE_OPTION_ENUM_FUNCTIONS(ENUM, VALUES)                              \
  /** The option spelling of `value`. */                                       \
  inline llvm::StringRef stringify##ENUM(ENUM value) {                         \
    switch (value) { VALUES(GROVE_OPTION_NAME_CASE) }                          \
    llvm_unreachable("not a " #ENUM);                                          \
  }                                                                            \
  inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os, ENUM value) {    \
    return os << stringify##ENUM(value);                                       \
  }                                                                            \
  /** Every value, for an option of this type (llvm::cl::values). */           \
  inline llvm::cl::ValuesClass get##ENUM##Values() {                           \
    return llvm::cl::ValuesClass({VALUES(GROVE_OPTION_CL_VALUE)});             \
  }
GROVE_OPTION_ENUM_FUNCTIONS(CompileTarget, GROVE_COMPILE_TARGET_VALUES)
GROVE_OPTION_ENUM_FUNCTIONS(CompressError, GROVE_COMPRESS_ERROR_VALUES)
GROVE_OPTION_ENUM_FUNCTIONS(TreeBatching, GROVE_TREE_BATCHING_VALUES)
#undef GROVE_OPTION_ENUM_FUNCTIONS

/// compress-ratio: each bucket sends 1/value of itself, or (isAuto) the
/// cost model picks each bucket's ratio. Parsed once, by its option.
struct CompressRatio {
  int64_t value = 32;
  bool isAuto = false;

  CompressRatio() = default;
  /*implicit*/ CompressRatio(int64_t value) : value(value) {}
  static CompressRatio getAuto() {
    CompressRatio ratio;
    ratio.isAuto = true;
    return ratio;
  }
  bool operator==(const CompressRatio &other) const {
    return isAuto == other.isAuto && (isAuto || value == other.value);
  }
  bool operator!=(const CompressRatio &other) const {
    return !(*this == other);
  }
};

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                     const CompressRatio &ratio) {
  if (ratio.isAuto)
    return os << "auto";
  return os << ratio.value;
}

/// The cl::values an option of type T takes: its enum's, else none.
struct NoOptionValues {
  template <typename Opt> void apply(Opt &) const {}
};
template <typename T> struct OptionValues {
  static NoOptionValues get() { return {}; }
};
#define GROVE_OPTION_VALUES(ENUM)                                              \
  template <> struct OptionValues<ENUM> {                                      \
    static llvm::cl::ValuesClass get() { return get##ENUM##Values(); }         \
  };
GROVE_OPTION_VALUES(CompileTarget)
GROVE_OPTION_VALUES(CompressError)
GROVE_OPTION_VALUES(TreeBatching)
#undef GROVE_OPTION_VALUES

/// llvm::cl::parser<T> for an enum T, but a bad value's message lists the
/// good ones ("'x' is not one of a, b or c"), which LLVM's does not.
template <typename T>
class EnumOptionParser : public llvm::cl::generic_parser_base {
protected:
  struct OptionInfo : public GenericOptionInfo {
    OptionInfo(llvm::StringRef name, T v, llvm::StringRef helpStr)
        : GenericOptionInfo(name, helpStr), V(v) {}
    llvm::cl::OptionValue<T> V;
  };
  // Named as llvm::cl::parser's, which MLIR's pass options read to print a
  // value (PassOptions' GenericOptionParser).
  llvm::SmallVector<OptionInfo, 4> Values;

public:
  using parser_data_type = T;

  EnumOptionParser(llvm::cl::Option &o) : generic_parser_base(o) {}

  unsigned getNumOptions() const override { return Values.size(); }
  llvm::StringRef getOption(unsigned n) const override {
    return Values[n].Name;
  }
  llvm::StringRef getDescription(unsigned n) const override {
    return Values[n].HelpStr;
  }
  const llvm::cl::GenericOptionValue &
  getOptionValue(unsigned n) const override {
    return Values[n].V;
  }

  bool parse(llvm::cl::Option &o, llvm::StringRef argName, llvm::StringRef arg,
             T &value) {
    for (const OptionInfo &info : Values) {
      if (info.Name == arg) {
        value = info.V.getValue();
        return false;
      }
    }
    std::string names;
    for (unsigned i = 0, e = Values.size(); i != e; ++i)
      names += (i == 0       ? ""
                : i + 1 == e ? " or "
                             : ", ") +
               Values[i].Name.str();
    return o.error("'" + arg + "' is not one of " + names);
  }

  template <typename DT>
  void addLiteralOption(llvm::StringRef name, const DT &v,
                        llvm::StringRef helpStr) {
    Values.push_back(OptionInfo(name, static_cast<T>(v), helpStr));
    llvm::cl::AddLiteralOption(Owner, name);
  }
  void removeLiteralOption(llvm::StringRef name) {
    Values.erase(Values.begin() + findOption(name));
  }
};

} // namespace mlir::grove

#undef GROVE_OPTION_ENUMERATOR
#undef GROVE_OPTION_NAME_CASE
#undef GROVE_OPTION_CL_VALUE

namespace llvm::cl {
// Every option of these types, pass, pipeline or grovec flag, parses with
// the message that lists the values.
template <>
class parser<mlir::grove::CompileTarget>
    : public mlir::grove::EnumOptionParser<mlir::grove::CompileTarget> {
  using EnumOptionParser::EnumOptionParser;
};
template <>
class parser<mlir::grove::CompressError>
    : public mlir::grove::EnumOptionParser<mlir::grove::CompressError> {
  using EnumOptionParser::EnumOptionParser;
};
template <>
class parser<mlir::grove::TreeBatching>
    : public mlir::grove::EnumOptionParser<mlir::grove::TreeBatching> {
  using EnumOptionParser::EnumOptionParser;
};

/// compress-ratio: a positive integer or auto (the check that it is
/// positive is the pass's, with the other counts).
template <>
class parser<mlir::grove::CompressRatio>
    : public basic_parser<mlir::grove::CompressRatio> {
public:
  parser(Option &o) : basic_parser(o) {}
  bool parse(Option &o, StringRef, StringRef arg,
             mlir::grove::CompressRatio &value) {
    if (arg == "auto") {
      value = mlir::grove::CompressRatio::getAuto();
      return false;
    }
    int64_t n;
    if (arg.getAsInteger(10, n))
      return o.error("'" + arg + "' is not an integer or auto");
    value = n;
    return false;
  }
  StringRef getValueName() const override { return "int|auto"; }
  // --print-options shows the value, not whether it is the default (a
  // class-typed option keeps no default to compare with).
  void printOptionDiff(const Option &o, const mlir::grove::CompressRatio &v,
                       const OptionValue<mlir::grove::CompressRatio> &,
                       size_t globalWidth) const {
    printOptionName(o, globalWidth);
    outs() << "= " << v << "\n";
  }
};
} // namespace llvm::cl

#endif // GROVE_SUPPORT_OPTIONTYPES_H
