//===- Agreement.h - What ranks agree on before exchanging ------*- C++ -*-===//
//
// Ranks that run different models, builds or batch shapes would hand MPI
// collectives of different sizes, which Open MPI reports through the job's
// fatal handler (or worse, sums past a buffer's end). So before a call that
// runs collectives, and before an application's own collective, the ranks
// exchange a fixed-size fingerprint: a hash of each thing they must agree
// on, in a fixed order. Where the hashes differ, every rank sees the same
// gathered hashes, so all of them exchange the first differing thing's text
// and fail with one message that names it and the ranks on each side, before
// any collective of the call runs (PyTorch's TORCH_DISTRIBUTED_DEBUG=DETAIL
// fingerprints are the model; docs/distributed.md, "Agreement").
//
//===----------------------------------------------------------------------===//
#ifndef GROVE_RT_AGREEMENT_H
#define GROVE_RT_AGREEMENT_H

#include "grove/runtime.h"

#include <array>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace grove::rt {

class Communicator;

/// One thing the ranks must agree on.
struct AgreementItem {
  /// What it is, for the message: "the model".
  std::string topic;
  /// What one line of `text` is, for the message: "state".
  std::string unit;
  /// Its description, a line per part (parts are compared one by one to
  /// name the first that differs); the hash covers all of it.
  std::string text;
  /// Appended to the message when it differs (what to do about it).
  std::string advice;
};

/// At most this many items are compared (a fixed-size exchange).
constexpr size_t kMaxAgreementItems = 10;
/// Bytes of an item's text exchanged on a disagreement.
constexpr size_t kAgreementTextBytes = 1024;

/// A rank's fingerprint: the format, then a hash of each item's text (0
/// past the last item).
using AgreementHashes = std::array<uint64_t, kMaxAgreementItems + 1>;
static_assert(sizeof(AgreementHashes) % 4 == 0 && kAgreementTextBytes % 4 == 0,
              "exchanged as 32-bit words");

AgreementHashes hashItems(const std::vector<AgreementItem> &items);

/// The first item whose hashes differ between the ranks' fingerprints
/// (index 0 is the format itself: a rank that runs another Grove; item k
/// is index k + 1), or -1.
int firstDisagreement(const std::vector<AgreementHashes> &ranks);

/// The message for item `item` (0 = the format) of `mine`, given each
/// rank's text of it: the ranks grouped by what they have, the first line
/// that differs, and the item's advice.
std::string describeDisagreement(const std::vector<AgreementItem> &mine,
                                 int item,
                                 const std::vector<std::string> &texts,
                                 const std::vector<AgreementHashes> &ranks);

/// Exchanges the fingerprints of `items` over `comm` (not counted as
/// payload). True when every rank agrees; false with `disagreement` set
/// when some differ (every rank fails alike), or with it empty when the
/// exchange itself failed (a service error is then pending, as for any
/// collective).
bool agree(Communicator &comm, const std::vector<AgreementItem> &items,
           const char *what, std::string &disagreement);

/// The item every agreement starts with: what the rank is doing (a call of
/// an entry, an application's all-reduce), so that ranks doing different
/// things are told so.
AgreementItem operationItem(std::string what);

/// The runtime's ABI and descriptor versions.
AgreementItem runtimeItem();

/// An agreement started before a call runs (startAgreement), resolved
/// where the collectives run, in their order.
class PendingAgreement {
public:
  /// Records the outcome: `message` empty when the ranks agreed.
  void finish(std::string message, grove_status status);
  /// Blocks until resolved (bounded: the exchange has the communicator's
  /// deadline); false with the message and status when the ranks
  /// disagreed or the exchange failed.
  bool wait(std::string &message, grove_status &status);

private:
  std::mutex lock;
  std::condition_variable ready;
  bool done = false;
  std::string outcome;
  grove_status status = GROVE_OK;
};

/// Starts agreeing on `items` behind every collective called before. On a
/// disagreement the communicator refuses the collectives called after it
/// (setRefusal, with `prefix` + what differs) until the refusal is
/// cleared; a failed exchange fails the communicator, as any collective.
std::shared_ptr<PendingAgreement>
startAgreement(Communicator &comm, std::vector<AgreementItem> items,
               std::string prefix);

} // namespace grove::rt

#endif // GROVE_RT_AGREEMENT_H
