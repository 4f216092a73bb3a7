#include "brokerd/raft/memory_persistence.h"

#include <algorithm>
#include <stdexcept>

namespace brokerd::raft {

uint64_t chain_hash(uint64_t previous, const Entry& e) {
  // FNV-1a over the payload, then mixed with the epoch, offset and previous chain.
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : e.payload) h = (h ^ c) * 0x100000001b3ULL;
  uint64_t s = previous ^ (h + 0x9e3779b97f4a7c15ULL) ^ (static_cast<uint64_t>(e.epoch) << 32) ^
               static_cast<uint64_t>(e.offset) ^ (e.control ? 0x5555ULL : 0);
  s = (s ^ (s >> 30)) * 0xbf58476d1ce4e5b9ULL;
  s = (s ^ (s >> 27)) * 0x94d049bb133111ebULL;
  return s ^ (s >> 31);
}

Epoch MemoryRaftLog::last_epoch() const {
  return entries_.empty() ? base_epoch_ : entries_.back().entry.epoch;
}

std::optional<Epoch> MemoryRaftLog::epoch_at(Offset offset) const {
  if (offset == start_ - 1) return base_epoch_;
  if (offset < start_ || offset >= end_offset()) return std::nullopt;
  return entries_[static_cast<size_t>(offset - start_)].entry.epoch;
}

const Entry* MemoryRaftLog::entry_at(Offset offset) const {
  if (offset < start_ || offset >= end_offset()) return nullptr;
  return &entries_[static_cast<size_t>(offset - start_)].entry;
}

std::optional<uint64_t> MemoryRaftLog::chain_at(Offset offset) const {
  if (offset == start_ - 1) return base_chain_;
  if (offset < start_ || offset >= end_offset()) return std::nullopt;
  return entries_[static_cast<size_t>(offset - start_)].chain;
}

OffsetAndEpoch MemoryRaftLog::end_offset_for_epoch(Epoch epoch) const {
  if (epoch < base_epoch_) return {-1, -1};
  // Epochs only grow along the log, so the first entry with a larger epoch ends the answer.
  auto it = std::upper_bound(entries_.begin(), entries_.end(), epoch,
                             [](Epoch e, const Stored& s) { return e < s.entry.epoch; });
  if (it == entries_.begin()) return {start_, base_epoch_};
  const Epoch found = std::prev(it)->entry.epoch;
  const Offset end = it == entries_.end() ? end_offset() : it->entry.offset;
  return {end, found};
}

std::vector<Entry> MemoryRaftLog::read(Offset from, size_t max_entries) const {
  std::vector<Entry> out;
  for (Offset o = std::max(from, start_); o < end_offset() && out.size() < max_entries; ++o)
    out.push_back(entries_[static_cast<size_t>(o - start_)].entry);
  return out;
}

void MemoryRaftLog::append(const std::vector<Entry>& entries) {
  for (const auto& e : entries) {
    if (e.offset != end_offset()) throw std::logic_error("raft log append out of order");
    if (e.epoch < last_epoch()) throw std::logic_error("raft log append with older epoch");
    const uint64_t prev = entries_.empty() ? base_chain_ : entries_.back().chain;
    entries_.push_back({e, chain_hash(prev, e)});
    if (hook_) hook_(e, entries_.back().chain);
  }
}

void MemoryRaftLog::truncate_to(Offset end) {
  if (end >= end_offset()) return;
  if (end < start_) end = start_;
  entries_.resize(static_cast<size_t>(end - start_));
  flushed_end_ = std::min(flushed_end_, end);
}

void MemoryRaftLog::truncate_prefix(OffsetAndEpoch id) {
  if (id.offset <= start_) return;
  if (id.offset > end_offset()) {
    reset(id);
    return;
  }
  const size_t drop = static_cast<size_t>(id.offset - start_);
  base_chain_ = entries_[drop - 1].chain;
  entries_.erase(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(drop));
  start_ = id.offset;
  base_epoch_ = id.epoch;
  flushed_end_ = std::max(flushed_end_, start_);
}

void MemoryRaftLog::reset(OffsetAndEpoch id) {
  entries_.clear();
  start_ = id.offset;
  base_epoch_ = id.epoch;
  base_chain_ = 0;
  flushed_end_ = start_;
}

void MemoryRaftLog::flush(Offset up_to) {
  flushed_end_ = std::max(flushed_end_, std::min(up_to, end_offset()));
}

void MemoryRaftLog::crash() { truncate_to(flushed_end_); }

}  // namespace brokerd::raft
