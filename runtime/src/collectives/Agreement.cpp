//===- Agreement.cpp - Fingerprints the ranks compare ---------------------===//

#include "Agreement.h"

#include "Communicator.h"
#include "Error.h"

#include "grove/ModelSchema.h"
#include "grove/abi.h"

#include <algorithm>
#include <cstring>
#include <sstream>

using namespace grove::rt;

namespace {

/// Changes with the items' order or meaning: ranks of two Grove versions
/// that compare different things fail on this word alone.
constexpr uint64_t kAgreementFormat = 0x67726f7665610001ull; // "grovea" 1

uint64_t fnv1a(const std::string &text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

/// "rank 2", "ranks 0, 1", at most eight named.
std::string rankList(const std::vector<int> &ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size() && i < 8; ++i)
    out += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > 8)
    out += " and " + std::to_string(ranks.size() - 8) + " more";
  return out;
}

} // namespace

AgreementHashes grove::rt::hashItems(const std::vector<AgreementItem> &items) {
  AgreementHashes hashes{};
  hashes[0] = kAgreementFormat;
  for (size_t i = 0; i < items.size() && i < kMaxAgreementItems; ++i)
    hashes[i + 1] = fnv1a(items[i].text);
  return hashes;
}

int grove::rt::firstDisagreement(const std::vector<AgreementHashes> &ranks) {
  for (size_t k = 0; k < kMaxAgreementItems + 1; ++k)
    for (const AgreementHashes &r : ranks)
      if (r[k] != ranks.front()[k])
        return int(k);
  return -1;
}

std::string
grove::rt::describeDisagreement(const std::vector<AgreementItem> &mine,
                                int item, const std::vector<std::string> &texts,
                                const std::vector<AgreementHashes> &ranks) {
  // Ranks grouped by their hash of the item, in order of first appearance.
  std::vector<uint64_t> keys;
  std::vector<std::vector<int>> groups;
  for (size_t r = 0; r < ranks.size(); ++r) {
    uint64_t key = ranks[r][size_t(item)];
    size_t g = size_t(std::find(keys.begin(), keys.end(), key) - keys.begin());
    if (g == keys.size()) {
      keys.push_back(key);
      groups.emplace_back();
    }
    groups[g].push_back(int(r));
  }
  if (item == 0 || size_t(item) > mine.size()) {
    std::string out = "the ranks run Grove runtimes that compare different "
                      "things before a collective:";
    for (const std::vector<int> &g : groups)
      out += " " + rankList(g) + ";";
    out.pop_back();
    return out + " (run one Grove build on every rank)";
  }
  const AgreementItem &what = mine[size_t(item) - 1];
  // The first line where the first two groups differ names the part.
  std::vector<std::vector<std::string>> parts;
  for (const std::vector<int> &g : groups)
    parts.push_back(lines(size_t(g.front()) < texts.size()
                              ? texts[size_t(g.front())]
                              : std::string()));
  size_t at = 0;
  const std::vector<std::string> &a = parts[0], &b = parts[1];
  while (at < a.size() && at < b.size() && a[at] == b[at])
    ++at;
  std::string out = "the ranks disagree on " + what.topic;
  if (at > 0 && !what.unit.empty())
    out += " at " + what.unit + " " + std::to_string(at + 1);
  out += ":";
  for (size_t g = 0; g < groups.size(); ++g) {
    out += (g ? "; " : " ") + rankList(groups[g]) + ": ";
    out += at < parts[g].size() ? "'" + parts[g][at] + "'" : "(none)";
  }
  if (at >= a.size() && at >= b.size())
    out += " (they differ past the first " +
           std::to_string(kAgreementTextBytes - 1) + " bytes)";
  if (!what.advice.empty())
    out += ". " + what.advice;
  return out;
}

bool grove::rt::agree(Communicator &comm,
                      const std::vector<AgreementItem> &items, const char *what,
                      std::string &disagreement) {
  disagreement.clear();
  AgreementHashes mine = hashItems(items);
  std::vector<AgreementHashes> all(size_t(comm.size()));
  if (!comm.exchange(&mine, all.data(), sizeof(mine), what))
    return false;
  int item = firstDisagreement(all);
  if (item < 0)
    return true;
  // Every rank saw the same hashes: all of them send this item's text.
  char text[kAgreementTextBytes] = {};
  if (item > 0 && size_t(item) <= items.size())
    std::strncpy(text, items[size_t(item) - 1].text.c_str(), sizeof(text) - 1);
  std::vector<char> gathered(sizeof(text) * all.size());
  if (!comm.exchange(text, gathered.data(), sizeof(text), what))
    return false;
  std::vector<std::string> texts;
  for (size_t r = 0; r < all.size(); ++r)
    texts.emplace_back(
        gathered.data() + r * sizeof(text),
        strnlen(gathered.data() + r * sizeof(text), sizeof(text)));
  disagreement = describeDisagreement(items, item, texts, all);
  return false;
}

AgreementItem grove::rt::operationItem(std::string what) {
  return {"what each rank is doing", "", std::move(what),
          "Every rank must make the same calls, in one order"};
}

AgreementItem grove::rt::runtimeItem() {
  return {"the Grove runtime", "line",
          "ABI " + std::to_string(GROVE_ABI_VERSION) + "\nmodel descriptor " +
              std::to_string(grove::schema::kDescriptorVersion),
          "Run one Grove build on every rank"};
}

void PendingAgreement::finish(std::string message, grove_status why) {
  {
    std::lock_guard<std::mutex> hold(lock);
    done = true;
    outcome = std::move(message);
    status = why;
  }
  ready.notify_all();
}

bool PendingAgreement::wait(std::string &message, grove_status &why) {
  std::unique_lock<std::mutex> hold(lock);
  ready.wait(hold, [&] { return done; });
  message = outcome;
  why = status;
  return outcome.empty();
}

std::shared_ptr<PendingAgreement>
grove::rt::startAgreement(Communicator &comm, std::vector<AgreementItem> items,
                          std::string prefix) {
  auto pending = std::make_shared<PendingAgreement>();
  comm.post([&comm, pending, items = std::move(items),
             prefix = std::move(prefix)] {
    // A refusal left over (a call that failed before it could clear its
    // own) ends here: this agreement decides for the collectives after it.
    comm.setRefusal("");
    std::string disagreement;
    if (agree(comm, items, "the ranks' agreement before the call",
              disagreement))
      return pending->finish("", GROVE_OK);
    if (!disagreement.empty()) {
      comm.setRefusal(prefix + disagreement);
      return pending->finish(prefix + disagreement, GROVE_ERROR_PEER);
    }
    // The exchange failed: the communicator has failed (its message).
    std::string message;
    grove_status status = GROVE_ERROR_PEER;
    if (!takeServiceError(message, status))
      message = comm.failure();
    pending->finish(message.empty() ? "the agreement failed" : message, status);
  });
  return pending;
}
