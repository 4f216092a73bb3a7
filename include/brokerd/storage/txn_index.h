#pragma once
// The aborted-transaction index of one segment (`<base offset>.txnindex`), as Kafka lays it
// out: one 34-byte entry per transaction aborted by a marker in the segment (int16 version 0,
// int64 producer id, int64 first offset, int64 last offset (the marker's), int64 last stable
// offset when the marker was written). Like the other indexes it carries no checksum and is
// rebuilt from the log when its segment is recovered.
//
// Entries are few (one per aborted transaction): they are held in memory, read from the file
// at first use, and every new entry is written at once; no descriptor stays open.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

namespace brokerd::storage {

struct AbortedTxn {
  int64_t producer_id = -1;
  int64_t first_offset = -1;
  int64_t last_offset = -1;
  int64_t last_stable_offset = -1;
  bool operator==(const AbortedTxn&) const = default;
};

class TxnIndex {
 public:
  static constexpr size_t kEntryBytes = 34;

  explicit TxnIndex(std::filesystem::path path) : path_(std::move(path)) {}

  const std::filesystem::path& path() const { return path_; }
  // The entries, oldest first (read from the file at first use).
  const std::vector<AbortedTxn>& entries() const;
  // Adds an entry and writes it (not synced). False when the write failed.
  bool append(const AbortedTxn& t);
  // Drops the entries whose last offset is at or above `offset`.
  void truncate_to(int64_t offset);
  // Drops every entry and the file (its segment is being rebuilt).
  void reset();
  // Syncs entries written since the last flush.
  void flush();
  // Renames the file (if any) with `suffix`; returns the new path.
  std::optional<std::filesystem::path> rename_with_suffix(const char* suffix);
  // Replaces every entry and rewrites the file (a compaction swap's segment).
  void set_entries(std::vector<AbortedTxn> entries);

 private:
  bool rewrite();

  std::filesystem::path path_;
  mutable std::optional<std::vector<AbortedTxn>> entries_;
  bool dirty_ = false;
};

// Encoding of entries (exposed for tests).
void encode_aborted_txn(const AbortedTxn& t, std::span<std::byte, TxnIndex::kEntryBytes> out);
std::optional<AbortedTxn> decode_aborted_txn(std::span<const std::byte> in);

}  // namespace brokerd::storage
