#include "brokerd/storage/producer_state.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <fstream>

#include "brokerd/common/logger.h"
#include "brokerd/storage/crc32c.h"
#include "brokerd/storage/segment.h"

namespace brokerd::storage {

namespace fs = std::filesystem;
using protocol::ErrorCode;

int32_t increment_sequence(int32_t seq, int32_t delta) {
  if (seq > INT32_MAX - delta) return delta - (INT32_MAX - seq) - 1;
  return seq + delta;
}

int32_t decrement_sequence(int32_t seq, int32_t delta) {
  if (seq - delta < 0) return INT32_MAX - (delta - seq) + 1;
  return seq - delta;
}

bool in_sequence(int32_t last, int32_t next) {
  return int64_t{next} == int64_t{last} + 1 || (next == 0 && last == INT32_MAX);
}

const ProducerBatch* ProducerEntry::find(int32_t first_seq, int32_t last_seq) const {
  for (const auto& b : batches)
    if (b.first_seq == first_seq && b.last_seq == last_seq) return &b;
  return nullptr;
}

void ProducerEntry::add(int16_t new_epoch, const ProducerBatch& b) {
  if (new_epoch != epoch) {
    // Sequences restart with each epoch; the old epoch's batches can no longer be retried.
    batches.clear();
    epoch = new_epoch;
  }
  batches.push_back(b);
  if (batches.size() > kRetainedProducerBatches) batches.erase(batches.begin());
  last_timestamp = b.timestamp;
}

// ---- ProducerAppend --------------------------------------------------------------------

const ProducerEntry* ProducerAppend::current(int64_t pid) const {
  for (const auto& e : updated_)
    if (e.producer_id == pid) return &e;
  return state_.find(pid);
}

ErrorCode ProducerAppend::add(const ProducerBatchHeader& h, const ProducerBatch& b, std::string* message) {
  duplicate_.reset();
  const ProducerEntry* cur = current(h.producer_id);
  // An unknown producer (never seen, or expired) is accepted at any sequence, as Kafka does
  // since KIP-360: there is nothing left to compare with. A batch without a sequence is the
  // node's own (the group coordinator's transactional offsets; clients must give one): only
  // its epoch is checked, as Kafka checks a coordinator's appends.
  const bool sequenced = h.first_seq != kNoSequence;
  if (cur && cur->epoch != kNoProducerEpoch) {
    if (h.epoch < cur->epoch) {
      *message = fmt::format("producer {} epoch {} is older than the current epoch {}", h.producer_id, h.epoch,
                             cur->epoch);
      return ErrorCode::invalid_producer_epoch;
    }
    if (!sequenced) {
      // Nothing to compare: no duplicate, no order.
    } else if (h.epoch == cur->epoch) {
      if (const ProducerBatch* d = cur->find(h.first_seq, h.last_seq)) {
        duplicate_ = *d;
        return ErrorCode::none;
      }
      if (!cur->batches.empty() && !in_sequence(cur->last_seq(), h.first_seq)) {
        *message = fmt::format("out of order sequence for producer {}: {} (incoming), {} (last written)",
                               h.producer_id, h.first_seq, cur->last_seq());
        return ErrorCode::out_of_order_sequence_number;
      }
    } else if (h.first_seq != 0) {
      *message = fmt::format("producer {} starts epoch {} at sequence {}, not 0", h.producer_id, h.epoch, h.first_seq);
      return ErrorCode::out_of_order_sequence_number;
    }
  }
  if (ErrorCode e = check_txn(cur, h, message); e != ErrorCode::none) return e;
  auto it = std::find_if(updated_.begin(), updated_.end(),
                         [&](const ProducerEntry& e) { return e.producer_id == h.producer_id; });
  if (it == updated_.end()) {
    ProducerEntry e;
    if (cur) e = *cur;
    e.producer_id = h.producer_id;
    updated_.push_back(std::move(e));
    it = std::prev(updated_.end());
  }
  it->add(h.epoch, b);
  if (h.transactional && !it->in_transaction()) {
    it->current_txn_first_offset = b.first_offset;
    opened_.push_back(h.producer_id);
  }
  return ErrorCode::none;
}

void ProducerAppend::commit(ProducerStateManager& state) {
  for (auto& e : updated_) state.put(std::move(e));
  for (int64_t pid : opened_) state.clear_verification(pid);
  updated_.clear();
  opened_.clear();
}

// ---- ProducerStateManager --------------------------------------------------------------

const ProducerEntry* ProducerStateManager::find(int64_t pid) const {
  auto it = producers_.find(pid);
  return it == producers_.end() ? nullptr : &it->second;
}

void ProducerStateManager::update(const ProducerBatchHeader& h, const ProducerBatch& b) {
  snapshot_matches_ = -1;
  auto& e = producers_[h.producer_id];  // in place: followers and replays call this per batch
  e.producer_id = h.producer_id;
  e.add(h.epoch, b);
  if (h.transactional && !e.in_transaction()) {
    e.current_txn_first_offset = b.first_offset;
    ongoing_.insert({b.first_offset, h.producer_id});
  }
}

void ProducerStateManager::put(ProducerEntry e) {
  snapshot_matches_ = -1;
  int64_t pid = e.producer_id;
  auto& slot = producers_[pid];
  if (slot.in_transaction()) ongoing_.erase({slot.current_txn_first_offset, pid});
  if (e.in_transaction()) ongoing_.insert({e.current_txn_first_offset, pid});
  slot = std::move(e);
}

size_t ProducerStateManager::expire(int64_t now_ms, int64_t expiration_ms) {
  // A producer inside a transaction stays: its transaction holds the last stable offset back.
  const size_t gone = std::erase_if(producers_, [&](const auto& kv) {
    return !kv.second.in_transaction() && now_ms - kv.second.last_timestamp >= expiration_ms;
  });
  if (gone > 0) snapshot_matches_ = -1;
  return gone;
}

void ProducerStateManager::maybe_expire(int64_t now_ms, int64_t expiration_ms, int64_t check_interval_ms) {
  if (now_ms - last_expiry_ms_ < check_interval_ms) return;
  last_expiry_ms_ = now_ms;
  expire(now_ms, expiration_ms);
}

// ---- snapshots -------------------------------------------------------------------------

namespace {

constexpr uint16_t kSnapshotVersion = 2;
constexpr size_t kHeaderBytes = 2 + 4;
constexpr size_t kEntryBytesV1 = 8 + 2 + 8 + 1;
constexpr size_t kEntryBytes = kEntryBytesV1 + 8 + 4;  // + ongoing transaction, coordinator epoch
constexpr size_t kBatchBytes = 4 + 4 + 8 + 8 + 8;

template <typename T>
void put_be(std::vector<std::byte>& out, T v) {
  auto u = static_cast<std::make_unsigned_t<T>>(v);
  for (int i = sizeof(T) - 1; i >= 0; --i) out.push_back(static_cast<std::byte>((u >> (8 * i)) & 0xff));
}

template <typename T>
T get_be(std::span<const std::byte>& in) {
  std::make_unsigned_t<T> u = 0;
  for (size_t i = 0; i < sizeof(T); ++i) u = static_cast<std::make_unsigned_t<T>>((u << 8) | std::to_integer<uint8_t>(in[i]));
  in = in.subspan(sizeof(T));
  return static_cast<T>(u);
}

std::optional<int64_t> snapshot_offset(const fs::path& p) {
  if (p.extension() != ProducerStateManager::kSnapshotSuffix) return std::nullopt;
  return parse_segment_file_stem(p.stem().string());
}

}  // namespace

std::vector<std::byte> encode_producer_snapshot(const std::unordered_map<int64_t, ProducerEntry>& producers,
                                                uint16_t version) {
  std::vector<std::byte> out;
  out.reserve(kHeaderBytes + 4 + producers.size() * (kEntryBytes + kBatchBytes * kRetainedProducerBatches));
  put_be<uint16_t>(out, version);
  put_be<uint32_t>(out, 0);  // CRC, filled below
  put_be<uint32_t>(out, static_cast<uint32_t>(producers.size()));
  for (const auto& [pid, e] : producers) {
    put_be<int64_t>(out, pid);
    put_be<int16_t>(out, e.epoch);
    put_be<int64_t>(out, e.last_timestamp);
    if (version >= 2) {
      put_be<int64_t>(out, e.current_txn_first_offset);
      put_be<int32_t>(out, e.coordinator_epoch);
    }
    put_be<uint8_t>(out, static_cast<uint8_t>(e.batches.size()));
    for (const auto& b : e.batches) {
      put_be<int32_t>(out, b.first_seq);
      put_be<int32_t>(out, b.last_seq);
      put_be<int64_t>(out, b.first_offset);
      put_be<int64_t>(out, b.last_offset);
      put_be<int64_t>(out, b.timestamp);
    }
  }
  uint32_t crc = crc32c(std::span<const std::byte>(out).subspan(kHeaderBytes));
  for (int i = 0; i < 4; ++i) out[2 + i] = static_cast<std::byte>((crc >> (8 * (3 - i))) & 0xff);
  return out;
}

std::optional<std::vector<ProducerEntry>> decode_producer_snapshot(std::span<const std::byte> in) {
  if (in.size() < kHeaderBytes + 4) return std::nullopt;
  const uint16_t version = get_be<uint16_t>(in);
  if (version < 1 || version > kSnapshotVersion) return std::nullopt;
  const size_t entry_bytes = version >= 2 ? kEntryBytes : kEntryBytesV1;
  uint32_t crc = get_be<uint32_t>(in);
  if (crc != crc32c(in)) return std::nullopt;
  uint32_t count = get_be<uint32_t>(in);
  if (count > in.size() / entry_bytes) return std::nullopt;
  std::vector<ProducerEntry> entries;
  entries.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    if (in.size() < entry_bytes) return std::nullopt;
    ProducerEntry e;
    e.producer_id = get_be<int64_t>(in);
    e.epoch = get_be<int16_t>(in);
    e.last_timestamp = get_be<int64_t>(in);
    if (version >= 2) {
      e.current_txn_first_offset = get_be<int64_t>(in);
      e.coordinator_epoch = get_be<int32_t>(in);
    }
    size_t n = get_be<uint8_t>(in);
    if (n > kRetainedProducerBatches || in.size() < n * kBatchBytes) return std::nullopt;
    for (size_t j = 0; j < n; ++j) {
      ProducerBatch b;
      b.first_seq = get_be<int32_t>(in);
      b.last_seq = get_be<int32_t>(in);
      b.first_offset = get_be<int64_t>(in);
      b.last_offset = get_be<int64_t>(in);
      b.timestamp = get_be<int64_t>(in);
      e.batches.push_back(b);
    }
    entries.push_back(std::move(e));
  }
  if (!in.empty()) return std::nullopt;
  return entries;
}

fs::path ProducerStateManager::snapshot_path(int64_t offset) const {
  return dir_ / (segment_file_stem(offset) + kSnapshotSuffix);
}

bool ProducerStateManager::write_snapshot(int64_t offset, bool sync) {
  auto bytes = encode_producer_snapshot(producers_);
  fs::path path = snapshot_path(offset);
  fs::path tmp = path.string() + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      ::close(fd);
      fs::remove(tmp);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  // At a roll the snapshot is not fsynced: after a power loss a torn one fails its CRC and
  // the state is rebuilt from an older snapshot and the log. A clean shutdown syncs.
  if (sync) ::fdatasync(fd);
  ::close(fd);
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return false;
  snapshot_matches_ = offset;
  files().insert(offset);
  return true;
}

void ProducerStateManager::set_snapshot_files(const std::vector<std::string>& names) {
  files_.emplace();
  for (const auto& n : names)
    if (auto o = snapshot_offset(n)) files_->insert(*o);
}

std::set<int64_t>& ProducerStateManager::files() const {
  if (!files_) {
    files_.emplace();
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_, ec))
      if (auto o = snapshot_offset(e.path())) files_->insert(*o);
  }
  return *files_;
}

std::vector<int64_t> ProducerStateManager::snapshot_offsets() const {
  const auto& f = files();
  return {f.begin(), f.end()};
}

std::optional<int64_t> ProducerStateManager::load_snapshot(int64_t max_offset) {
  producers_.clear();
  ongoing_.clear();
  auto offsets = snapshot_offsets();
  for (auto it = offsets.rbegin(); it != offsets.rend(); ++it) {
    if (*it > max_offset) continue;
    fs::path path = snapshot_path(*it);
    std::ifstream in(path, std::ios::binary);
    std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto entries = decode_producer_snapshot(std::as_bytes(std::span<const char>(raw)));
    if (!entries) {
      module_logger("storage")->warn("{}: deleting unreadable producer snapshot", path.string());
      std::error_code ec;
      fs::remove(path, ec);
      files().erase(*it);
      continue;
    }
    for (auto& e : *entries) put(std::move(e));
    snapshot_matches_ = *it;
    return *it;
  }
  return std::nullopt;
}

void ProducerStateManager::delete_snapshots_after(int64_t offset) {
  std::error_code ec;
  for (int64_t o : snapshot_offsets())
    if (o > offset) {
      fs::remove(snapshot_path(o), ec);
      files().erase(o);
    }
}

void ProducerStateManager::delete_snapshots_before(int64_t offset) {
  auto offsets = snapshot_offsets();
  if (offsets.empty()) return;
  offsets.pop_back();  // the newest stays: a rebuild starts from it
  std::error_code ec;
  for (int64_t o : offsets)
    if (o < offset) {
      fs::remove(snapshot_path(o), ec);
      files().erase(o);
    }
}

}  // namespace brokerd::storage
