#pragma once
// The `quorum-state` file: KRaft's QuorumStateData (version 0 fields) as one JSON object,
// replaced atomically and durably by every write() (temp file, fsync, rename, fsync dir).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "brokerd/raft/persistence.h"

namespace brokerd::raft {

class DiskQuorumStateStore final : public QuorumStateStore {
 public:
  static constexpr const char* kFileName = "quorum-state";

  // `dir` is created if missing. `voters` and `cluster_id` are written for operators and
  // tools (the core takes its voters from RaftConfig); read() does not return them.
  DiskQuorumStateStore(std::filesystem::path dir, std::vector<ReplicaId> voters = {},
                       std::string cluster_id = {});

  // nullopt when no state was ever written. Throws std::runtime_error on a file that cannot be
  // parsed: guessing would risk forgetting a vote.
  std::optional<QuorumStateData> read() const override;
  void write(const QuorumStateData& state) override;

  const std::filesystem::path& path() const { return path_; }
  // The voter ids recorded in the file (empty if none or no file).
  std::vector<ReplicaId> recorded_voters() const;

 private:
  std::filesystem::path path_;
  std::vector<ReplicaId> voters_;
  std::string cluster_id_;
};

}  // namespace brokerd::raft
