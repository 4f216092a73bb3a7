#pragma once
// Messages exchanged between replicas. Each struct mirrors the fields of the KRaft API of the
// same name (one partition of the metadata topic), so the network adapter maps them one to one
// onto the generated Kafka codecs. Fields Kafka carries that the core does not need (cluster
// id, directory ids, endpoints) are left to the adapter.
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "brokerd/raft/errc.h"
#include "brokerd/raft/types.h"

namespace brokerd::raft {

// Vote (api key 52). `pre_vote` is KIP-996: a probe that changes no state on the voter.
struct VoteRequest {
  Epoch candidate_epoch = 0;
  ReplicaId candidate_id = kNoReplica;
  ReplicaId voter_id = kNoReplica;
  Epoch last_offset_epoch = 0;
  Offset last_offset = 0;  // the candidate's log end offset
  bool pre_vote = false;
};

struct VoteResponse {
  Errc error = Errc::none;
  ReplicaId leader_id = kNoReplica;
  Epoch leader_epoch = 0;  // the voter's current epoch
  bool vote_granted = false;
  bool pre_vote = false;
};

// BeginQuorumEpoch (api key 53): a new leader announces itself to the voters.
struct BeginQuorumEpochRequest {
  ReplicaId voter_id = kNoReplica;
  ReplicaId leader_id = kNoReplica;
  Epoch leader_epoch = 0;
};

struct BeginQuorumEpochResponse {
  Errc error = Errc::none;
  ReplicaId leader_id = kNoReplica;
  Epoch leader_epoch = 0;
};

// EndQuorumEpoch (api key 54): a resigning leader asks the voters to elect a successor,
// preferring the candidates listed first.
struct EndQuorumEpochRequest {
  ReplicaId leader_id = kNoReplica;
  Epoch leader_epoch = 0;
  std::vector<ReplicaId> preferred_candidates;
};

struct EndQuorumEpochResponse {
  Errc error = Errc::none;
  ReplicaId leader_id = kNoReplica;
  Epoch leader_epoch = 0;
};

// Fetch (api key 1) as KRaft uses it: followers and observers pull from the leader.
struct FetchRequest {
  ReplicaId replica_id = kNoReplica;
  Epoch current_leader_epoch = 0;
  Offset fetch_offset = 0;
  Epoch last_fetched_epoch = 0;
  int32_t max_entries = 0;
};

struct FetchResponse {
  Errc error = Errc::none;
  ReplicaId leader_id = kNoReplica;
  Epoch leader_epoch = 0;
  Offset high_watermark = -1;
  Offset log_start_offset = 0;
  // Set when the fetcher's log disagrees with the leader's: the largest epoch the leader has
  // that is not after `last_fetched_epoch`, and where that epoch ends in the leader's log.
  std::optional<OffsetAndEpoch> diverging_epoch;
  // Set when the fetch offset lies below the leader's log start: fetch this snapshot first.
  std::optional<OffsetAndEpoch> snapshot_id;
  std::vector<Entry> entries;
};

// FetchSnapshot (api key 59): one chunk of a snapshot.
struct FetchSnapshotRequest {
  ReplicaId replica_id = kNoReplica;
  Epoch current_leader_epoch = 0;
  OffsetAndEpoch snapshot_id;
  int64_t position = 0;
  int32_t max_bytes = 0;
};

struct FetchSnapshotResponse {
  Errc error = Errc::none;
  ReplicaId leader_id = kNoReplica;
  Epoch leader_epoch = 0;
  OffsetAndEpoch snapshot_id;
  int64_t size = 0;
  int64_t position = 0;
  std::string bytes;
};

// DescribeQuorum (api key 55) is answered locally by the leader; see RaftNode::describe_quorum.
struct ReplicaState {
  ReplicaId replica_id = kNoReplica;
  Offset log_end_offset = -1;
  int64_t last_fetch_timestamp = -1;
  int64_t last_caught_up_timestamp = -1;
};

struct DescribeQuorumResponse {
  Errc error = Errc::none;
  ReplicaId leader_id = kNoReplica;
  Epoch leader_epoch = 0;
  Offset high_watermark = -1;
  std::vector<ReplicaState> current_voters;
  std::vector<ReplicaState> observers;
};

using MessageBody =
    std::variant<VoteRequest, VoteResponse, BeginQuorumEpochRequest, BeginQuorumEpochResponse,
                 EndQuorumEpochRequest, EndQuorumEpochResponse, FetchRequest, FetchResponse,
                 FetchSnapshotRequest, FetchSnapshotResponse>;

// The envelope: a response copies the request's correlation id, which is how a replica tells
// the answer to its outstanding request from a late or duplicated one.
struct Message {
  ReplicaId from = kNoReplica;
  ReplicaId to = kNoReplica;
  int64_t correlation_id = 0;
  MessageBody body;
};

// Requests and responses alternate in MessageBody, each request followed by its response.
inline bool is_response(const MessageBody& b) { return b.index() % 2 == 1; }

// A one-line rendering for traces.
std::string describe(const Message& m);

}  // namespace brokerd::raft
