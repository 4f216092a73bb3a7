#include "brokerd/replication/epoch_cache.h"

#include <charconv>

namespace brokerd::replication {

LeaderEpochCache::LeaderEpochCache(std::vector<EpochEntry> entries) {
  for (const auto& e : entries) assign(e.epoch, e.start_offset);
}

void LeaderEpochCache::assign(Epoch epoch, Offset start_offset) {
  if (epoch < 0 || start_offset < 0) return;
  if (!entries_.empty() && entries_.back().epoch == epoch && entries_.back().start_offset <= start_offset) return;
  // Entries that would no longer be monotonic were never written by this replica's leaders.
  while (!entries_.empty() && (entries_.back().epoch >= epoch || entries_.back().start_offset >= start_offset))
    entries_.pop_back();
  entries_.push_back({epoch, start_offset});
}

EpochEnd LeaderEpochCache::end_for(Epoch requested, Offset log_end) const {
  if (requested < 0 || entries_.empty()) return {};
  if (requested >= entries_.back().epoch) {
    if (requested == entries_.back().epoch) return {requested, log_end};
    return {};  // an epoch this replica never saw
  }
  // The first entry with a larger epoch ends the requested one.
  size_t higher = 0;
  while (higher < entries_.size() && entries_[higher].epoch <= requested) ++higher;
  if (higher == 0) return {requested, entries_.front().start_offset};
  return {entries_[higher - 1].epoch, entries_[higher].start_offset};
}

Epoch LeaderEpochCache::epoch_at(Offset offset) const {
  Epoch found = kNoEpoch;
  for (const auto& e : entries_) {
    if (e.start_offset > offset) break;
    found = e.epoch;
  }
  return found;
}

void LeaderEpochCache::truncate_from_end(Offset end) {
  while (!entries_.empty() && entries_.back().start_offset >= end) entries_.pop_back();
}

void LeaderEpochCache::truncate_from_start(Offset start) {
  size_t keep_from = 0;
  while (keep_from + 1 < entries_.size() && entries_[keep_from + 1].start_offset <= start) ++keep_from;
  entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(keep_from));
  if (!entries_.empty() && entries_.front().start_offset < start) entries_.front().start_offset = start;
}

std::optional<EpochEntry> LeaderEpochCache::latest() const {
  if (entries_.empty()) return std::nullopt;
  return entries_.back();
}

std::string LeaderEpochCache::to_checkpoint() const {
  std::string out = "0\n" + std::to_string(entries_.size()) + "\n";
  for (const auto& e : entries_) out += std::to_string(e.epoch) + " " + std::to_string(e.start_offset) + "\n";
  return out;
}

namespace {

// Reads one integer and the single separator after it.
template <typename T>
bool read_number(std::string_view& text, T& out, char separator) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || p == text.data() + text.size() || *p != separator) return false;
  text.remove_prefix(static_cast<size_t>(p - text.data()) + 1);
  return true;
}

}  // namespace

std::optional<LeaderEpochCache> LeaderEpochCache::from_checkpoint(std::string_view text) {
  int version = -1;
  size_t count = 0;
  if (!read_number(text, version, '\n') || version != 0 || !read_number(text, count, '\n')) return std::nullopt;
  std::vector<EpochEntry> entries;
  for (size_t i = 0; i < count; ++i) {
    EpochEntry e;
    if (!read_number(text, e.epoch, ' ') || !read_number(text, e.start_offset, '\n')) return std::nullopt;
    if (e.epoch < 0 || e.start_offset < 0) return std::nullopt;
    if (!entries.empty() && (e.epoch <= entries.back().epoch || e.start_offset < entries.back().start_offset))
      return std::nullopt;
    entries.push_back(e);
  }
  if (!text.empty()) return std::nullopt;
  LeaderEpochCache cache;
  cache.entries_ = std::move(entries);
  return cache;
}

}  // namespace brokerd::replication
