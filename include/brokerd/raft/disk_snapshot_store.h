#pragma once
// Snapshots as files `<end offset, 20 digits>-<epoch, 10 digits>.checkpoint` in one directory,
// named as Kafka names them. A snapshot is written to `<name>.checkpoint.part`, fsynced and
// renamed, so a file with the final name is always complete; `.part` leftovers of a crash are
// removed at open. Each file holds a small header (magic, version, length, CRC-32C) and the
// state machine's bytes.
//
// Threading: one thread at a time, like the RaftNode that uses it.
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "brokerd/raft/persistence.h"

namespace brokerd::raft {

class DiskSnapshotStore final : public SnapshotStore {
 public:
  static constexpr std::string_view kSuffix = ".checkpoint";
  static constexpr std::string_view kPartSuffix = ".part";

  // Creates `dir` if missing, removes half-written `.part` files and lists the snapshots.
  explicit DiskSnapshotStore(std::filesystem::path dir);

  // The newest snapshot, read and checked (cached after the first read). Throws
  // std::runtime_error if its file is corrupt.
  std::optional<Snapshot> latest() const override;
  // Saves durably unless a snapshot at the same or a later offset exists (as the memory store),
  // then deletes the older ones: the core drops the log below a new snapshot at once.
  void save(const Snapshot& snapshot) override;

  std::vector<OffsetAndEpoch> list() const { return {ids_.begin(), ids_.end()}; }
  std::optional<Snapshot> read(OffsetAndEpoch id) const;
  // Deletes snapshots whose end offset is below `offset`; returns how many.
  size_t delete_before(Offset offset);

  const std::filesystem::path& dir() const { return dir_; }
  static std::string file_name(OffsetAndEpoch id);
  static std::optional<OffsetAndEpoch> parse_file_name(std::string_view name);

 private:
  struct ById {
    bool operator()(const OffsetAndEpoch& a, const OffsetAndEpoch& b) const {
      return a.offset != b.offset ? a.offset < b.offset : a.epoch < b.epoch;
    }
  };
  std::filesystem::path dir_;
  std::set<OffsetAndEpoch, ById> ids_;
  mutable std::optional<Snapshot> cached_;
};

}  // namespace brokerd::raft
