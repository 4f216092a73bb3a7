#pragma once
// What replicas of one partition say to each other: the follower's fetch and its answer, the
// leader-epoch question a follower asks before fetching (OffsetForLeaderEpoch), and the
// batches that travel in a fetch answer.
#include <cstdint>
#include <span>
#include <vector>

#include "brokerd/protocol/error_code.h"
#include "brokerd/replication/types.h"

namespace brokerd::replication {

using protocol::ErrorCode;

// A batch as the leader wrote it. The core reads only the offsets and the epoch; the bytes
// travel untouched from the leader's log to the follower's.
struct Batch {
  Offset base_offset = 0;
  Offset last_offset = 0;
  Epoch leader_epoch = 0;
  std::span<const std::byte> bytes;
};

struct FetchRequest {
  BrokerId replica = kNoBroker;
  Epoch current_leader_epoch = 0;  // the epoch the follower believes in
  Offset fetch_offset = 0;         // the follower's log end
  Offset log_start_offset = kNoOffset;  // the follower's log start (unknown: kNoOffset)
  // The broker epoch of the process that fetched (KIP-903), or kNoBrokerEpoch; the caller
  // fills it in: the core's own requests leave it unknown.
  int64_t replica_epoch = kNoBrokerEpoch;
};

// The leader's decision on a follower's fetch; the caller reads the batches from
// `fetch_offset` when error is none.
struct FetchDecision {
  ErrorCode error = ErrorCode::none;
  Offset high_watermark = 0;
  Offset log_start_offset = 0;
};

struct FetchResponse {
  ErrorCode error = ErrorCode::none;
  Epoch leader_epoch = 0;  // the epoch the request named, echoed
  Offset high_watermark = 0;
  Offset log_start_offset = 0;
  std::vector<Batch> batches;
};

struct EpochEndRequest {
  BrokerId replica = kNoBroker;
  Epoch current_leader_epoch = 0;
  Epoch leader_epoch = kNoEpoch;  // the follower's latest epoch: where did it end?
};

struct EpochEndResponse {
  ErrorCode error = ErrorCode::none;
  Epoch current_leader_epoch = 0;  // echoed
  Epoch leader_epoch = kNoEpoch;
  Offset end_offset = kNoOffset;
};

}  // namespace brokerd::replication
