// Whole Produce requests against real logs in a temporary directory. The input is a script:
// each step builds a request for two partitions (new idempotent batches, retries of earlier
// ones, plain batches, several batches in one partition, any codec), encodes it with the
// generated codec, may flip a byte of the encoding, decodes it and appends every partition's
// records as the Produce handler does. The property: every acknowledgement (error 0) is
// readable at the offset it answered, holding exactly the records that were sent, and a
// retry is answered with its first write's offset. A duplicate is judged as Kafka judges it,
// by producer, epoch and sequence range: a flipped byte that moves a batch into the other
// partition can make two different batches share a range, and the second is then answered
// with the first one's offset (the broker does not compare contents).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "brokerd/protocol/messages/produce_request.h"
#include "brokerd/protocol/wire.h"
#include "brokerd/storage/batch_builder.h"
#include "brokerd/storage/log.h"
#include "brokerd/storage/record_batch.h"

using namespace brokerd;
using namespace brokerd::storage;

namespace {

constexpr int kPartitions = 2;
constexpr int64_t kNow = 1'700'000'000'000;

class Script {
 public:
  Script(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool done() const { return p_ >= end_; }
  uint8_t byte() { return done() ? 0 : *p_++; }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

struct Sent {
  Bytes bytes;                                // the batch as sent
  std::vector<std::pair<std::string, std::string>> records;  // as built
  std::optional<int64_t> acked_at;            // its first acknowledgement
};

std::filesystem::path scratch_dir() {
  std::filesystem::path base = std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
  return base / ("brokerd-produce-fuzz-" + std::to_string(::getpid()));
}

// next_seq: per producer id, the next sequence of one partition.
Sent build_batch(Script& s, std::map<int64_t, int32_t>& next_seq, bool idempotent) {
  Sent out;
  BatchOptions o;
  o.compression = static_cast<Compression>(s.byte() % 5);
  if (idempotent) {
    const int64_t pid = 1 + s.byte() % 3;
    o.producer_id = pid;
    o.producer_epoch = 0;
    o.base_sequence = next_seq[pid];
  }
  BatchBuilder b(o);
  const int n = 1 + s.byte() % 4;
  for (int i = 0; i < n; ++i) {
    std::string key = "k" + std::to_string(s.byte());
    std::string value(s.byte() % 64, static_cast<char>('a' + i));
    b.add(kNow, key, value);
    out.records.emplace_back(std::move(key), std::move(value));
  }
  if (idempotent) next_seq[o.producer_id] += n;  // the producer moves on, acknowledged or not
  out.bytes = b.build();
  return out;
}

using Records = std::vector<std::pair<std::string, std::string>>;

// The keys and values of one whole batch.
std::optional<Records> records_of(std::span<const std::byte> batch) {
  RecordBatchView v(batch);
  Records out;
  RecordReader reader(v);
  Record rec;
  auto text = [](std::optional<std::span<const std::byte>> b) {
    return b ? std::string(reinterpret_cast<const char*>(b->data()), b->size()) : std::string();
  };
  while (reader.next(rec)) out.emplace_back(text(rec.key), text(rec.value));
  if (reader.error() != ErrorCode::none) return std::nullopt;
  return out;
}

// The whole batch that starts at `offset`.
std::optional<Bytes> batch_at(const Log& log, int64_t offset) {
  auto r = log.read(offset, 1 << 20, true, log.log_end_offset());
  if (r.error != ErrorCode::none) return std::nullopt;
  Bytes bytes = r.records.to_bytes();
  if (bytes.size() < batch_layout::header_size) return std::nullopt;
  RecordBatchView v(bytes);
  if (v.base_offset() != offset || v.size() > bytes.size()) return std::nullopt;
  bytes.resize(v.size());
  return bytes;
}

// The records stored in the batch that starts at `offset`.
std::optional<Records> stored_at(const Log& log, int64_t offset) {
  auto batch = batch_at(log, offset);
  return batch ? records_of(*batch) : std::nullopt;
}

// Whether the batch stored at `offset` has the producer, epoch and sequence range of `sent`.
bool same_sequence_range(const Log& log, int64_t offset, std::span<const std::byte> sent) {
  auto batch = batch_at(log, offset);
  if (!batch) return false;
  RecordBatchView a(*batch), b(sent);
  return a.producer_id() == b.producer_id() && a.producer_epoch() == b.producer_epoch() &&
         a.base_sequence() == b.base_sequence() && a.records_count() == b.records_count();
}

void check(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Script s(data, size);
  const auto dir = scratch_dir();
  std::filesystem::remove_all(dir);
  std::vector<std::unique_ptr<Log>> logs;
  LogConfig cfg;
  cfg.segment_bytes = 4096;  // rolls often
  cfg.index_interval_bytes = 128;
  cfg.retention_ms = -1;
  for (int p = 0; p < kPartitions; ++p) logs.push_back(Log::open(dir / ("t-" + std::to_string(p)), cfg, true));

  std::vector<std::map<int64_t, int32_t>> next_seq(kPartitions);
  std::vector<std::vector<Sent>> sent(kPartitions);
  for (int step = 0; step < 24 && !s.done(); ++step) {
    protocol::ProduceRequest req;
    req.acks = -1;
    req.timeout_ms = 1000;
    auto& topic = req.topic_data.emplace_back();
    topic.name = "t";
    // What each partition of the request carries: indexes into sent[p].
    std::vector<std::vector<size_t>> carried(kPartitions);
    for (int p = 0; p < kPartitions; ++p) {
      const uint8_t op = s.byte();
      if (op % 5 == 4) continue;  // this partition is not in the request
      Bytes payload;
      const int batches = op % 7 == 6 ? 2 : 1;
      for (int k = 0; k < batches; ++k) {
        const uint8_t kind = s.byte() % 3;
        if (kind == 0 && !sent[p].empty()) {
          carried[p].push_back(s.byte() % sent[p].size());  // a retry of an earlier batch
        } else {
          sent[p].push_back(build_batch(s, next_seq[p], kind != 2));
          carried[p].push_back(sent[p].size() - 1);
        }
        const Bytes& b = sent[p][carried[p].back()].bytes;  // sequences are per partition
        payload.insert(payload.end(), b.begin(), b.end());
      }
      auto& part = topic.partition_data.emplace_back();
      part.index = p;
      part.records = protocol::Records::of(SharedBytes::copy_of(payload));
    }
    const int16_t version = static_cast<int16_t>(3 + s.byte() % 9);
    protocol::Writer w;
    req.encode(w, version);
    Bytes wire = std::move(w).finish_bytes();
    const uint8_t flip = s.byte();
    if (flip & 1 && !wire.empty()) wire[(static_cast<size_t>(s.byte()) << 8 | s.byte()) % wire.size()] ^= std::byte{flip};

    protocol::ProduceRequest decoded;
    try {
      protocol::Reader r(wire);
      decoded.decode(r, version);
    } catch (const protocol::DecodeError&) {
      continue;
    }
    const bool flipped = flip & 1;
    for (const auto& t : decoded.topic_data) {
      for (const auto& part : t.partition_data) {
        if (t.name != "t" || part.index < 0 || part.index >= kPartitions || part.records.is_null) continue;
        Bytes payload = part.records.to_bytes();
        if (payload.empty()) continue;
        const int p = part.index;
        Log& log = *logs[p];
        const int64_t end_before = log.log_end_offset();
        // Before the append, which writes offsets into the payload.
        const bool as_built = carried[p].size() == 1 && payload == sent[p][carried[p].front()].bytes;
        auto res = log.append(payload, 0, kNow, AppendOrigin::client);
        if (res.error != ErrorCode::none) {
          check(log.log_end_offset() == end_before);  // a refusal writes nothing
          continue;
        }
        // A new write holds the records sent; a duplicate names a stored batch of its range.
        check(res.duplicate || res.base_offset == end_before);
        if (res.duplicate) check(same_sequence_range(log, res.base_offset, payload));
        else check(stored_at(log, res.base_offset) == records_of(payload) && records_of(payload).has_value());
        if (flipped) continue;  // the byte may have moved data between partitions: no model
        // An intact request: exactly the one batch built for this partition was acknowledged.
        check(as_built);
        Sent& batch = sent[p][carried[p].front()];
        if (res.duplicate) check(batch.acked_at.has_value() && *batch.acked_at == res.base_offset);
        else if (!batch.acked_at) batch.acked_at = res.base_offset;
      }
    }
    if (flipped) break;  // the model of what was sent no longer holds
  }
  // Every acknowledgement still holds at the end, after all the rolls.
  for (int p = 0; p < kPartitions; ++p) {
    for (const auto& b : sent[p]) {
      if (!b.acked_at) continue;
      auto stored = stored_at(*logs[p], *b.acked_at);
      check(stored.has_value() && *stored == b.records);
    }
  }
  logs.clear();
  std::filesystem::remove_all(dir);
  return 0;
}
