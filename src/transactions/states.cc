#include "brokerd/transactions/states.h"

#include <algorithm>
#include <array>

namespace brokerd::transactions {
namespace {

using S = TxnState;

constexpr std::array<S, 3> kToEmpty{S::empty, S::complete_commit, S::complete_abort};
constexpr std::array<S, 4> kToOngoing{S::ongoing, S::empty, S::complete_commit, S::complete_abort};
constexpr std::array<S, 1> kToPrepareCommit{S::ongoing};
// An epoch fence ends in an abort: PrepareEpochFence is only ever a step towards PrepareAbort.
constexpr std::array<S, 2> kToPrepareAbort{S::ongoing, S::prepare_epoch_fence};
constexpr std::array<S, 1> kToCompleteCommit{S::prepare_commit};
constexpr std::array<S, 1> kToCompleteAbort{S::prepare_abort};
constexpr std::array<S, 3> kToDead{S::empty, S::complete_abort, S::complete_commit};
constexpr std::array<S, 1> kToPrepareEpochFence{S::ongoing};

struct Row {
  S state;
  std::string_view name;
};
constexpr std::array<Row, 8> kNames{{
    {S::empty, "Empty"},
    {S::ongoing, "Ongoing"},
    {S::prepare_commit, "PrepareCommit"},
    {S::prepare_abort, "PrepareAbort"},
    {S::complete_commit, "CompleteCommit"},
    {S::complete_abort, "CompleteAbort"},
    {S::dead, "Dead"},
    {S::prepare_epoch_fence, "PrepareEpochFence"},
}};

}  // namespace

std::string_view state_name(TxnState s) {
  for (const auto& r : kNames)
    if (r.state == s) return r.name;
  return "Unknown";
}

std::optional<TxnState> state_from_id(int8_t id) {
  if (id < 0 || id > static_cast<int8_t>(S::prepare_epoch_fence)) return std::nullopt;
  return static_cast<TxnState>(id);
}

std::optional<TxnState> state_from_name(std::string_view name) {
  for (const auto& r : kNames)
    if (r.name == name) return r.state;
  return std::nullopt;
}

std::span<const TxnState> valid_previous_states(TxnState to) {
  switch (to) {
    case S::empty: return kToEmpty;
    case S::ongoing: return kToOngoing;
    case S::prepare_commit: return kToPrepareCommit;
    case S::prepare_abort: return kToPrepareAbort;
    case S::complete_commit: return kToCompleteCommit;
    case S::complete_abort: return kToCompleteAbort;
    case S::dead: return kToDead;
    case S::prepare_epoch_fence: return kToPrepareEpochFence;
  }
  return {};
}

bool can_transition(TxnState from, TxnState to) {
  auto prev = valid_previous_states(to);
  return std::find(prev.begin(), prev.end(), from) != prev.end();
}

bool expiration_allowed(TxnState s) {
  return s == S::empty || s == S::complete_commit || s == S::complete_abort;
}

bool has_pending_transaction(TxnState s) {
  return s == S::ongoing || s == S::prepare_commit || s == S::prepare_abort;
}

bool is_prepare(TxnState s) { return s == S::prepare_commit || s == S::prepare_abort; }
bool is_complete(TxnState s) { return s == S::complete_commit || s == S::complete_abort; }

}  // namespace brokerd::transactions
