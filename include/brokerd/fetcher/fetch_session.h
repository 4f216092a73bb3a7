#pragma once
// The follower's half of an incremental fetch session (KIP-227), one per replica fetcher.
// The first request names every partition (session epoch 0) and opens a session on the
// leader; from then on a request names only partitions that are new or whose fetch moved
// (offset, leader epoch, log start, limit) and forgets those no longer fetched, and the
// answer carries only partitions with news. A partition left out of an answer has nothing
// new: its high watermark and log start are still those of its last answer (last_answer()).
//
// Any failure (no answer, a top-level error) starts again with a full request, since the
// leader may or may not have taken the lost one. No sockets or clocks.
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "brokerd/partitions/topic_partition.h"
#include "brokerd/protocol/error_code.h"

namespace brokerd::fetcher {

// What a request says of one partition.
struct FetchPosition {
  int32_t current_leader_epoch = -1;
  int64_t fetch_offset = 0;
  int64_t log_start_offset = -1;
  int32_t max_bytes = 0;
  bool operator==(const FetchPosition&) const = default;
};

struct FetchWant {
  partitions::TopicPartition tp;
  FetchPosition position;
};

class FollowerFetchSession {
 public:
  // The next request: its session id and epoch, the partitions to name, those to forget.
  struct Plan {
    int32_t session_id = 0;
    int32_t epoch = 0;
    std::vector<FetchWant> send;
    std::vector<partitions::TopicPartition> forget;
    bool full() const { return epoch == 0; }
  };
  // `wanted`: every partition this fetcher fetches now.
  Plan plan(const std::vector<FetchWant>& wanted) const;

  // The leader answered `plan` with `session_id` and no top-level error. Record what the
  // answer said of each partition it carried with answered_partition() after this.
  void answered(const Plan& plan, int32_t session_id);
  void answered_partition(const partitions::TopicPartition& tp, int64_t high_watermark, int64_t log_start_offset);
  // No answer, or a top-level error: the next request is a full one.
  void failed(protocol::ErrorCode error);

  struct LastAnswer {
    int64_t high_watermark = 0;
    int64_t log_start_offset = 0;
  };
  // What the last answer that carried tp said of it (nullopt: none since it joined).
  std::optional<LastAnswer> last_answer(const partitions::TopicPartition& tp) const;

  int32_t session_id() const { return session_id_; }
  size_t size() const { return partitions_.size(); }

 private:
  struct Known {
    FetchPosition position;
    std::optional<LastAnswer> answer;
  };
  int32_t session_id_ = 0;
  int32_t next_epoch_ = 0;  // 0: the next request is full (and opens a session)
  std::unordered_map<partitions::TopicPartition, Known> partitions_;
};

}  // namespace brokerd::fetcher
