#pragma once
// One segment of a partition: `<base offset, 20 digits>.log` with its .index, .timeindex and
// (when a transaction aborted in it) .txnindex.
// Reads hand out file slices over a shared file handle, so a segment deleted by retention
// stays readable for responses already being sent.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "brokerd/common/bytes.h"
#include "brokerd/storage/log_config.h"
#include "brokerd/storage/offset_index.h"
#include "brokerd/storage/time_index.h"
#include "brokerd/storage/txn_index.h"

namespace brokerd::storage {

// "00000000000000000042" for 42.
std::string segment_file_stem(int64_t base_offset);
// The offset a 20-digit file stem names; nullopt for any other name.
std::optional<int64_t> parse_segment_file_stem(std::string_view stem);

// Where one batch sits in a segment, read from its header.
// The first offset of a leader epoch among batches, as their headers say.
struct EpochStart {
  int32_t epoch = -1;
  int64_t base_offset = 0;
  bool operator==(const EpochStart&) const = default;
};

struct BatchPosition {
  uint64_t position = 0;
  uint32_t size = 0;
  int64_t base_offset = 0;
  int64_t last_offset = 0;
  int64_t max_timestamp = -1;
};

// A batch about to be written: its bytes lie in the append payload at `position`.
struct AppendBatch {
  size_t position = 0;
  size_t size = 0;
  int64_t base_offset = 0;
  int64_t last_offset = 0;
  int64_t max_timestamp = -1;
};

class Segment {
 public:
  // Creates empty files for a new active segment.
  static std::unique_ptr<Segment> create(const std::filesystem::path& dir, int64_t base_offset, const LogConfig& cfg,
                                         int64_t now_ms);
  // Opens existing files. `active` keeps the indexes writable.
  static std::unique_ptr<Segment> open(const std::filesystem::path& dir, int64_t base_offset, const LogConfig& cfg,
                                       bool active, int64_t now_ms);
  ~Segment();

  int64_t base_offset() const { return base_offset_; }
  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // One past the last offset written (base_offset when empty).
  int64_t next_offset() const { return next_offset_; }
  int64_t max_timestamp() const { return max_timestamp_; }
  int64_t offset_of_max_timestamp() const { return offset_of_max_timestamp_; }
  // How long this segment has been filling, as Kafka measures it for segment.ms: from the
  // first batch's max timestamp to the incoming batch's, or since creation when untimed.
  int64_t time_waited_for_roll(int64_t now_ms, int64_t incoming_max_timestamp) const {
    if (first_batch_timestamp_ >= 0 && incoming_max_timestamp >= 0) return incoming_max_timestamp - first_batch_timestamp_;
    return now_ms - created_ms_;
  }
  // How much earlier than segment.ms this segment rolls (segment.jitter.ms, drawn once).
  int64_t roll_jitter_ms() const { return roll_jitter_ms_; }
  // Largest timestamp for retention; file mtime when no batch has one.
  int64_t largest_timestamp() const;
  // The segment's file, opened again if release_files() let it go. Throws std::system_error
  // when it cannot be (the open files budget is spent, EMFILE, EACCES, ...).
  const std::shared_ptr<const FileHandle>& file() const;
  // Lets go of the file descriptor and the index mappings (an idle partition's); every later
  // use opens and maps them again. Readers holding the file keep it open until they finish.
  void release_files();
  bool holds_file() const { return file_ != nullptr; }
  const std::filesystem::path& log_path() const { return log_path_; }
  OffsetIndex& offset_index() { return *offset_index_; }
  TimeIndex& time_index() { return *time_index_; }
  bool indexes_full() const { return offset_index_->full() || time_index_->full(); }
  // The transactions aborted by markers in this segment. Truncated, renamed and deleted with
  // the segment; a recovered segment's is rebuilt by the Log (it needs the producer state).
  TxnIndex& txn_index() { return txn_index_; }
  const TxnIndex& txn_index() const { return txn_index_; }

  // Writes the payload with one pwrite and indexes its batches. On failure (ENOSPC, EIO)
  // cuts the file back to its previous size and returns the errno. The index entries the
  // batches may add get their disk blocks first, so a full disk fails the append here.
  int append(std::span<const std::byte> payload, std::span<const AppendBatch> batches);

  // Reads the header of the batch at `position`; nullopt at the end of the file or if the
  // header is unreadable.
  std::optional<BatchPosition> batch_at(uint64_t position) const;
  // The first batch whose last offset is >= offset, found through the index.
  std::optional<BatchPosition> find_batch(int64_t offset) const;
  // Reads bytes (tests, recovery, timestamp search).
  bool read_bytes(uint64_t position, std::span<std::byte> out) const;

  // Scans from the start, validating each batch (CRC, framing); truncates at the first bad
  // one and rebuilds both indexes. Returns the number of bytes cut off. With `epochs`, appends
  // the start of each leader epoch met among the valid batches.
  uint64_t recover(int32_t max_message_bytes, std::vector<EpochStart>* epochs = nullptr);
  // Loads next offset and max timestamp from the indexes and the batches after the last
  // index entry (a clean segment). False if the indexes look wrong.
  bool load_state();
  // Removes all batches whose base offset >= offset, then rebuilds the offset and time indexes
  // and drops the aborted transactions ending at or above `offset`.
  void truncate_to(int64_t offset, int32_t max_message_bytes);

  // Writes the final time index entry and trims the preallocated index files.
  void make_inactive();
  // Syncs the indexes' unsynced entries (the log file is synced through Log::flush_target).
  void flush_indexes();
  void close();
  // Renames every file with a ".deleted" suffix; the caller unlinks them later.
  std::vector<std::filesystem::path> rename_for_delete();

 private:
  Segment(const std::filesystem::path& dir, int64_t base_offset, const LogConfig& cfg);
  void open_files(bool create, bool active, int64_t now_ms);
  void index_batch(const BatchPosition& b);
  // Reserves disk blocks ahead of `end` (the file keeps its size) while the segment fills.
  void preallocate(uint64_t end);
  // Gives back the blocks reserved past the last batch.
  void release_preallocated();

  std::filesystem::path dir_;
  std::filesystem::path log_path_;
  int64_t base_offset_;
  LogConfig cfg_;
  mutable std::shared_ptr<const FileHandle> file_;
  std::unique_ptr<OffsetIndex> offset_index_;
  std::unique_ptr<TimeIndex> time_index_;
  TxnIndex txn_index_;
  uint64_t size_ = 0;
  int64_t next_offset_;
  int64_t max_timestamp_ = -1;
  int64_t offset_of_max_timestamp_ = -1;
  int64_t first_batch_timestamp_ = -1;
  int64_t created_ms_ = 0;
  int64_t roll_jitter_ms_ = 0;
  uint64_t bytes_since_index_ = 0;
  bool active_ = false;
  bool indexes_missing_ = false;
  bool preallocate_ = true;
  uint64_t preallocated_ = 0;  // end of the blocks reserved past the file's size
};

}  // namespace brokerd::storage
