#include "sim_log.h"

#include <algorithm>
#include <cstring>

namespace brokerd::replication::sim {

std::vector<std::byte> SimLog::encode(const StoredBatch& b) {
  std::vector<std::byte> out(b.records.size() * sizeof(Record));
  if (!out.empty()) std::memcpy(out.data(), b.records.data(), out.size());
  return out;
}

StoredBatch SimLog::decode(const Batch& b) {
  StoredBatch out;
  out.base = b.base_offset;
  out.epoch = b.leader_epoch;
  out.records.resize(b.bytes.size() / sizeof(Record));
  if (!out.records.empty()) std::memcpy(out.records.data(), b.bytes.data(), out.records.size() * sizeof(Record));
  return out;
}

bool SimLog::append_replica(const Batch& batch) {
  StoredBatch b = decode(batch);
  if (b.records.empty() || b.base != end_offset() || b.last() != batch.last_offset) std::abort();  // the core's duty
  batches_.push_back(std::move(b));
  return true;
}

void SimLog::truncate_to(Offset end) {
  while (!batches_.empty() && batches_.back().base >= end) batches_.pop_back();
  if (!batches_.empty() && batches_.back().last() >= end)
    batches_.back().records.resize(static_cast<size_t>(end - batches_.back().base));
  flushed_end_ = std::min(flushed_end_, end_offset());
  low_water_ = std::min(low_water_, end_offset());
}

void SimLog::reset_to(Offset start) {
  batches_.clear();
  start_ = start;
  flushed_end_ = start;
  low_water_ = std::min(low_water_, start);
}

void SimLog::advance_start(Offset start) {
  start = std::min(start, end_offset());
  if (start <= start_) return;
  while (!batches_.empty() && batches_.front().last() < start) batches_.erase(batches_.begin());
  start_ = start;
}

Offset SimLog::append_leader(Epoch epoch, const Record& r) {
  StoredBatch b;
  b.base = end_offset();
  b.epoch = epoch;
  b.records.push_back(r);
  batches_.push_back(std::move(b));
  return batches_.back().base;
}

Offset SimLog::find(int32_t producer, int32_t sequence) const {
  for (auto it = batches_.rbegin(); it != batches_.rend(); ++it) {
    for (size_t i = 0; i < it->records.size(); ++i) {
      const Record& r = it->records[i];
      if (r.producer == producer && r.sequence == sequence) return it->base + static_cast<Offset>(i);
    }
  }
  return -1;
}

const Entry* SimLog::entry_at(Offset offset) const {
  auto it = std::upper_bound(batches_.begin(), batches_.end(), offset,
                             [](Offset o, const StoredBatch& b) { return o < b.base; });
  if (it == batches_.begin()) return nullptr;
  --it;
  if (offset > it->last()) return nullptr;
  scratch_ = {it->epoch, it->records[static_cast<size_t>(offset - it->base)]};
  return &scratch_;
}

std::vector<std::pair<StoredBatch, std::vector<std::byte>>> SimLog::read(Offset offset, int max_batches) const {
  std::vector<std::pair<StoredBatch, std::vector<std::byte>>> out;
  auto it = std::upper_bound(batches_.begin(), batches_.end(), offset,
                             [](Offset o, const StoredBatch& b) { return o < b.base; });
  if (it != batches_.begin()) --it;
  for (; it != batches_.end() && static_cast<int>(out.size()) < max_batches; ++it) {
    if (it->last() < offset) continue;
    StoredBatch b = *it;
    if (b.base < offset) {  // a fetch from inside a batch gets the batch's tail (never happens in Kafka)
      b.records.erase(b.records.begin(), b.records.begin() + (offset - b.base));
      b.base = offset;
    }
    auto bytes = encode(b);
    out.emplace_back(std::move(b), std::move(bytes));
  }
  return out;
}

void SimLog::crash() {
  truncate_to(flushed_end_);
}

Offset SimLog::take_low_water() {
  const Offset v = low_water_;
  low_water_ = INT64_MAX;
  return v;
}

}  // namespace brokerd::replication::sim
