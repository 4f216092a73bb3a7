// The Log's producer-state hooks: the checks an append makes before it writes, and the
// loading of the state at open (the newest snapshot, then the batches written after it).
#include "brokerd/common/logger.h"
#include "brokerd/storage/log.h"
#include "brokerd/storage/record_batch.h"

namespace brokerd::storage {

namespace {

ProducerBatchHeader header_of(const RecordBatchView& v) {
  ProducerBatchHeader h;
  h.producer_id = v.producer_id();
  h.epoch = v.producer_epoch();
  h.first_seq = v.base_sequence();
  h.last_seq = increment_sequence(h.first_seq, v.last_offset_delta());
  h.transactional = v.is_transactional();
  return h;
}

// Control batches (transaction markers) carry no sequence; batches without a producer id
// are not idempotent.
bool is_idempotent_data(const RecordBatchView& v) { return v.producer_id() >= 0 && !v.is_control(); }
bool is_marker(const RecordBatchView& v) { return v.producer_id() >= 0 && v.is_control(); }

}  // namespace

bool Log::check_producers(std::span<std::byte> batches, const std::vector<BatchInfo>& infos, int64_t base,
                          int64_t append_time, ProducerAppend& staged, std::vector<std::optional<ProducerBatch>>& dups,
                          AppendResult& res) const {
  dups.assign(infos.size(), std::nullopt);
  int64_t next = base;
  for (size_t k = 0; k < infos.size(); ++k) {
    const BatchInfo& i = infos[k];
    RecordBatchView v(batches.subspan(i.position, i.size));
    int64_t last = next + i.last_offset_delta;
    if (is_idempotent_data(v)) {
      ProducerBatchHeader h = header_of(v);
      ProducerBatch b{h.first_seq, h.last_seq, next, last, append_time >= 0 ? append_time : i.max_timestamp};
      ErrorCode e = staged.add(h, b, &res.message);
      if (e != ErrorCode::none) {
        res.error = e;
        return false;
      }
      if (const auto& d = staged.duplicate()) {
        // Written before (or earlier in this payload): this batch alone is answered with its
        // original offsets and not written again; it takes no offsets of its own.
        dups[k] = *d;
        continue;
      }
    }
    next = last + 1;
  }
  return true;
}

void Log::note_replicated_producer(const RecordBatchView& v) {
  if (is_marker(v)) {
    if (auto m = parse_marker_batch(v)) note_marker(*m, v.base_offset(), v.max_timestamp(), true);
    return;
  }
  if (!is_idempotent_data(v)) return;
  ProducerBatchHeader h = header_of(v);
  producers_.update(h, ProducerBatch{h.first_seq, h.last_seq, v.base_offset(), v.last_offset(), v.max_timestamp()});
}

void Log::load_producer_state(int64_t rebuild_txn_index_from) {
  const int64_t leo = log_end_offset();
  const int64_t first = segments_.begin()->first;
  producers_.delete_snapshots_after(leo);
  int64_t from = std::max(producers_.load_snapshot(std::min(leo, rebuild_txn_index_from)).value_or(first), first);
  if (from >= leo) return;
  // Everything after the snapshot (a crash, truncation, or a log older than snapshots).
  size_t scanned = 0;
  auto it = segments_.upper_bound(from);
  if (it != segments_.begin()) --it;
  for (; it != segments_.end(); ++it) {
    const Segment& seg = *it->second;
    for (auto b = seg.find_batch(from); b; b = seg.batch_at(b->position + b->size)) {
      if (b->last_offset < from) continue;
      std::byte h[batch_layout::header_size];
      if (!seg.read_bytes(b->position, h)) break;
      RecordBatchView v(h);
      ++scanned;
      if (is_marker(v)) {
        Bytes whole(b->size);
        if (!seg.read_bytes(b->position, whole)) break;
        if (auto m = parse_marker_batch(RecordBatchView(whole)))
          note_marker(*m, b->base_offset, b->max_timestamp, b->base_offset >= rebuild_txn_index_from);
        continue;
      }
      if (!is_idempotent_data(v)) continue;
      ProducerBatchHeader hdr = header_of(v);
      producers_.update(hdr, ProducerBatch{hdr.first_seq, hdr.last_seq, b->base_offset, b->last_offset, b->max_timestamp});
    }
  }
  module_logger("storage")->info("{}: producer state rebuilt from offset {} ({} batches, {} producers)", dir_.string(),
                                 from, scanned, producers_.producers().size());
}

}  // namespace brokerd::storage
