#pragma once
// The KRaft RPCs on the wire: each raft::MessageBody maps one to one onto the generated Kafka
// codecs (Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch and FetchSnapshot of partition 0 of
// `__cluster_metadata`). Entries travel as record batches, one per run of entries of the same
// epoch and kind, exactly as the metadata log stores them.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "brokerd/common/bytes.h"
#include "brokerd/protocol/uuid.h"
#include "brokerd/quorum/voters.h"
#include "brokerd/raft/messages.h"

namespace brokerd::quorum {

// KRaft's names for the metadata partition.
inline constexpr const char* kMetadataTopic = "__cluster_metadata";
protocol::Uuid metadata_topic_id();  // the reserved id 1

// The version of each RPC this node sends (and the highest it serves).
inline constexpr int16_t kVoteVersion = 2;
inline constexpr int16_t kBeginQuorumEpochVersion = 1;
inline constexpr int16_t kEndQuorumEpochVersion = 1;
inline constexpr int16_t kFetchVersion = 17;
inline constexpr int16_t kFetchSnapshotVersion = 1;

// A request body as bytes on the wire: which API and version, and the encoded body (no header).
struct WireRequest {
  int16_t api_key = 0;
  int16_t version = 0;
  Bytes body;
};

// Encodes a request body (VoteRequest, BeginQuorumEpochRequest, EndQuorumEpochRequest,
// FetchRequest, FetchSnapshotRequest). Throws std::invalid_argument for a response body.
WireRequest encode_request(const raft::MessageBody& body, const std::string& cluster_id);

// Decodes a request of `api_key` at `version` into the raft message the core expects.
// `max_fetch_entries` bounds a decoded Fetch; the cluster id the sender named (if any) goes
// to `cluster_id`. Throws protocol::DecodeError when the body is malformed or does not name
// the metadata partition.
raft::MessageBody decode_request(int16_t api_key, int16_t version, std::span<const std::byte> body,
                                 int32_t max_fetch_entries, std::optional<std::string>* cluster_id = nullptr);

// Encodes the core's response to a request of `api_key` at `version`.
Bytes encode_response(int16_t api_key, int16_t version, const raft::MessageBody& body);

// The answer of type `api_key` that carries only `error` (a refused request), and the error
// of any response (none for a request).
raft::MessageBody error_response(int16_t api_key, raft::Errc error);
raft::Errc response_error(const raft::MessageBody& body);

// Decodes the response to `request` (the body this node sent).
raft::MessageBody decode_response(int16_t api_key, int16_t version, std::span<const std::byte> body,
                                  const raft::MessageBody& request);

// The DescribeQuorum answer for the metadata partition (v2 also lists the voters' controller
// endpoints).
Bytes encode_describe_quorum(int16_t version, const raft::DescribeQuorumResponse& quorum,
                             const std::vector<Voter>& voters);

// Entries as record batches and back (base offset = the first entry's offset, partition leader
// epoch = the epoch, the control attribute for control entries; each entry a record whose
// value is the payload). Decoding checks every batch's CRC and framing.
Bytes entries_to_batches(const std::vector<raft::Entry>& entries);
std::vector<raft::Entry> batches_to_entries(std::span<const std::byte> batches);

}  // namespace brokerd::quorum
