//===- Catalogue.cpp - GROVE_ABI_VERSION follows the service catalogue ----===//
//
// Every row of grove/services.def is part of the ABI between generated code
// and this library: a model built against other rows may call a service
// that is not here or pass it other arguments. The runtime refuses models of
// another GROVE_ABI_VERSION, so a change to the rows must come with a new
// version. This file makes that mechanical: it hashes the rows' text (macro
// helpers expanded, white space ignored) at compile time and the build
// fails until the hash is recorded for the current version.
//
//===----------------------------------------------------------------------===//

#include "grove/abi.h"

#include <cstdint>

namespace {

#define GROVE_CATALOGUE_STR(...) #__VA_ARGS__
#define GROVE_CATALOGUE_ROW(kind, ...) kind GROVE_CATALOGUE_STR((__VA_ARGS__))
#define GROVE_FAMILY(...) GROVE_CATALOGUE_ROW("F", __VA_ARGS__)
#define GROVE_SERVICE(...) GROVE_CATALOGUE_ROW("S", __VA_ARGS__)
#define GROVE_MEMREF_SERVICE(...) GROVE_CATALOGUE_ROW("M", __VA_ARGS__)
constexpr char kRows[] =
#include "grove/services.def"
    ;
#undef GROVE_CATALOGUE_ROW
#undef GROVE_CATALOGUE_STR

/// FNV-1a over the rows without white space, which preprocessors may place
/// differently around expanded macros.
constexpr uint64_t fingerprint(const char *text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *text; ++text)
    if (*text != ' ' && *text != '\t' && *text != '\n')
      h = (h ^ static_cast<unsigned char>(*text)) * 0x100000001b3ull;
  return h;
}

/// The catalogue's fingerprint for the current GROVE_ABI_VERSION. When the
/// assertion below fires, bump GROVE_ABI_VERSION in grove/abi.h and record
/// the fingerprint the compiler prints here.
constexpr uint64_t kRecordedFingerprint = 11867094463505712241ull;
template <uint64_t Actual, uint64_t Recorded> struct CatalogueUnchanged {
  static_assert(Actual == Recorded,
                "grove/services.def changed: bump GROVE_ABI_VERSION and "
                "record the fingerprint named in this error");
  static constexpr bool value = true;
};
static_assert(GROVE_ABI_VERSION == 11u,
              "record the catalogue's fingerprint for the new version");
static_assert(
    CatalogueUnchanged<fingerprint(kRows), kRecordedFingerprint>::value);

} // namespace
