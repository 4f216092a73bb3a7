#include "brokerd/quorum/kraft_codec.h"

#include <stdexcept>

#include "brokerd/protocol/framing.h"
#include "brokerd/protocol/messages/begin_quorum_epoch_request.h"
#include "brokerd/protocol/messages/describe_quorum_response.h"
#include "brokerd/protocol/messages/begin_quorum_epoch_response.h"
#include "brokerd/protocol/messages/end_quorum_epoch_request.h"
#include "brokerd/protocol/messages/end_quorum_epoch_response.h"
#include "brokerd/protocol/messages/fetch_request.h"
#include "brokerd/protocol/messages/fetch_response.h"
#include "brokerd/protocol/messages/fetch_snapshot_request.h"
#include "brokerd/protocol/messages/fetch_snapshot_response.h"
#include "brokerd/protocol/messages/vote_request.h"
#include "brokerd/protocol/messages/vote_response.h"
#include "brokerd/storage/batch_builder.h"
#include "brokerd/storage/record_batch.h"

namespace brokerd::quorum {

namespace p = brokerd::protocol;
using raft::Errc;

protocol::Uuid metadata_topic_id() {
  protocol::Uuid id;
  id.bytes[15] = 1;
  return id;
}

namespace {

template <typename Msg>
Bytes encode(const Msg& m, int16_t version) {
  return p::encode_body(m, version);
}

template <typename Msg>
Msg decode(std::span<const std::byte> body, int16_t version) {
  if (version < Msg::min_version || version > Msg::max_version) throw p::DecodeError("unsupported version");
  p::Reader r(body);
  Msg m;
  m.decode(r, version);
  return m;
}

[[noreturn]] void not_metadata() { throw p::DecodeError("the request does not name the metadata partition"); }

// The single partition a KRaft request or response carries.
template <typename Topics>
const auto& only_partition(const Topics& topics) {
  if (topics.size() != 1 || topics[0].partitions.size() != 1) not_metadata();
  return topics[0].partitions[0];
}

Errc errc(int16_t code) { return static_cast<Errc>(code); }
int16_t code(Errc e) { return static_cast<int16_t>(e); }

}  // namespace

// ---- entries <-> record batches ---------------------------------------------------------

Bytes entries_to_batches(const std::vector<raft::Entry>& entries) {
  Bytes out;
  size_t i = 0;
  while (i < entries.size()) {
    storage::BatchOptions o;
    o.base_offset = entries[i].offset;
    o.partition_leader_epoch = entries[i].epoch;
    o.control = entries[i].control;
    storage::BatchBuilder b(o);
    size_t j = i;
    while (j < entries.size() && entries[j].epoch == entries[i].epoch && entries[j].control == entries[i].control &&
           entries[j].offset == entries[i].offset + static_cast<int64_t>(j - i)) {
      b.add(0, std::nullopt, storage::as_bytes(entries[j].payload));
      ++j;
    }
    Bytes batch = b.build();
    out.insert(out.end(), batch.begin(), batch.end());
    i = j;
  }
  return out;
}

std::vector<raft::Entry> batches_to_entries(std::span<const std::byte> batches) {
  std::vector<raft::Entry> out;
  if (batches.empty()) return out;
  storage::BatchLimits limits;
  limits.max_batch_bytes = batches.size();
  std::vector<storage::BatchInfo> infos;
  auto v = storage::validate_batches(batches, limits, &infos);
  if (!v.ok()) throw p::DecodeError("bad metadata batch: " + v.message);
  for (const auto& info : infos) {
    storage::RecordBatchView batch(batches.subspan(info.position, info.size));
    storage::RecordReader reader(batch);
    storage::Record rec;
    while (reader.next(rec)) {
      raft::Entry e;
      e.offset = rec.offset;
      e.epoch = batch.partition_leader_epoch();
      e.control = batch.is_control();
      if (rec.value) e.payload.assign(reinterpret_cast<const char*>(rec.value->data()), rec.value->size());
      if (!out.empty() && e.offset != out.back().offset + 1) throw p::DecodeError("metadata entries are not contiguous");
      out.push_back(std::move(e));
    }
    if (reader.error() != storage::ErrorCode::none) throw p::DecodeError("bad metadata records");
  }
  return out;
}

// ---- requests -----------------------------------------------------------------------------

WireRequest encode_request(const raft::MessageBody& body, const std::string& cluster_id) {
  if (const auto* r = std::get_if<raft::VoteRequest>(&body)) {
    p::VoteRequest m;
    m.cluster_id = cluster_id;
    m.voter_id = r->voter_id;
    auto& t = m.topics.emplace_back();
    t.topic_name = kMetadataTopic;
    auto& part = t.partitions.emplace_back();
    part.candidate_epoch = r->candidate_epoch;
    part.candidate_id = r->candidate_id;
    part.last_offset_epoch = r->last_offset_epoch;
    part.last_offset = r->last_offset;
    part.pre_vote = r->pre_vote;
    return {p::VoteRequest::api_key, kVoteVersion, encode(m, kVoteVersion)};
  }
  if (const auto* r = std::get_if<raft::BeginQuorumEpochRequest>(&body)) {
    p::BeginQuorumEpochRequest m;
    m.cluster_id = cluster_id;
    m.voter_id = r->voter_id;
    auto& t = m.topics.emplace_back();
    t.topic_name = kMetadataTopic;
    auto& part = t.partitions.emplace_back();
    part.leader_id = r->leader_id;
    part.leader_epoch = r->leader_epoch;
    return {p::BeginQuorumEpochRequest::api_key, kBeginQuorumEpochVersion, encode(m, kBeginQuorumEpochVersion)};
  }
  if (const auto* r = std::get_if<raft::EndQuorumEpochRequest>(&body)) {
    p::EndQuorumEpochRequest m;
    m.cluster_id = cluster_id;
    auto& t = m.topics.emplace_back();
    t.topic_name = kMetadataTopic;
    auto& part = t.partitions.emplace_back();
    part.leader_id = r->leader_id;
    part.leader_epoch = r->leader_epoch;
    for (auto id : r->preferred_candidates) part.preferred_candidates.emplace_back().candidate_id = id;
    return {p::EndQuorumEpochRequest::api_key, kEndQuorumEpochVersion, encode(m, kEndQuorumEpochVersion)};
  }
  if (const auto* r = std::get_if<raft::FetchRequest>(&body)) {
    p::FetchRequest m;
    m.cluster_id = cluster_id;
    m.replica_state.replica_id = r->replica_id;
    m.max_wait_ms = 0;
    m.max_bytes = 8 << 20;
    auto& t = m.topics.emplace_back();
    t.topic_id = metadata_topic_id();
    auto& part = t.partitions.emplace_back();
    part.current_leader_epoch = r->current_leader_epoch;
    part.fetch_offset = r->fetch_offset;
    part.last_fetched_epoch = r->last_fetched_epoch;
    part.partition_max_bytes = 8 << 20;
    return {p::FetchRequest::api_key, kFetchVersion, encode(m, kFetchVersion)};
  }
  if (const auto* r = std::get_if<raft::FetchSnapshotRequest>(&body)) {
    p::FetchSnapshotRequest m;
    m.cluster_id = cluster_id;
    m.replica_id = r->replica_id;
    m.max_bytes = r->max_bytes;
    auto& t = m.topics.emplace_back();
    t.name = kMetadataTopic;
    auto& part = t.partitions.emplace_back();
    part.current_leader_epoch = r->current_leader_epoch;
    part.snapshot_id.end_offset = r->snapshot_id.offset;
    part.snapshot_id.epoch = r->snapshot_id.epoch;
    part.position = r->position;
    return {p::FetchSnapshotRequest::api_key, kFetchSnapshotVersion, encode(m, kFetchSnapshotVersion)};
  }
  throw std::invalid_argument("not a KRaft request");
}

raft::MessageBody decode_request(int16_t api_key, int16_t version, std::span<const std::byte> body,
                                 int32_t max_fetch_entries, std::optional<std::string>* cluster_id) {
  auto note_cluster = [cluster_id](const std::optional<std::string>& id) {
    if (cluster_id) *cluster_id = id;
  };
  switch (api_key) {
    case p::VoteRequest::api_key: {
      auto m = decode<p::VoteRequest>(body, version);
      note_cluster(m.cluster_id);
      if (m.topics.size() == 1 && m.topics[0].topic_name != kMetadataTopic) not_metadata();
      const auto& part = only_partition(m.topics);
      raft::VoteRequest r;
      r.candidate_epoch = part.candidate_epoch;
      r.candidate_id = part.candidate_id;
      r.voter_id = m.voter_id;
      r.last_offset_epoch = part.last_offset_epoch;
      r.last_offset = part.last_offset;
      r.pre_vote = part.pre_vote;
      return r;
    }
    case p::BeginQuorumEpochRequest::api_key: {
      auto m = decode<p::BeginQuorumEpochRequest>(body, version);
      note_cluster(m.cluster_id);
      if (m.topics.size() == 1 && m.topics[0].topic_name != kMetadataTopic) not_metadata();
      const auto& part = only_partition(m.topics);
      return raft::BeginQuorumEpochRequest{m.voter_id, part.leader_id, part.leader_epoch};
    }
    case p::EndQuorumEpochRequest::api_key: {
      auto m = decode<p::EndQuorumEpochRequest>(body, version);
      note_cluster(m.cluster_id);
      if (m.topics.size() == 1 && m.topics[0].topic_name != kMetadataTopic) not_metadata();
      const auto& part = only_partition(m.topics);
      raft::EndQuorumEpochRequest r;
      r.leader_id = part.leader_id;
      r.leader_epoch = part.leader_epoch;
      if (version >= 1) {
        for (const auto& c : part.preferred_candidates) r.preferred_candidates.push_back(c.candidate_id);
      } else {
        r.preferred_candidates = part.preferred_successors;
      }
      return r;
    }
    case p::FetchRequest::api_key: {
      auto m = decode<p::FetchRequest>(body, version);
      note_cluster(m.cluster_id);
      if (m.topics.size() == 1 && m.topics[0].topic_id != metadata_topic_id() &&
          m.topics[0].topic != kMetadataTopic) {
        not_metadata();
      }
      const auto& part = only_partition(m.topics);
      raft::FetchRequest r;
      r.replica_id = version >= 15 ? m.replica_state.replica_id : m.replica_id;
      r.current_leader_epoch = part.current_leader_epoch;
      r.fetch_offset = part.fetch_offset;
      r.last_fetched_epoch = part.last_fetched_epoch;
      r.max_entries = max_fetch_entries;
      return r;
    }
    case p::FetchSnapshotRequest::api_key: {
      auto m = decode<p::FetchSnapshotRequest>(body, version);
      note_cluster(m.cluster_id);
      if (m.topics.size() == 1 && m.topics[0].name != kMetadataTopic) not_metadata();
      const auto& part = only_partition(m.topics);
      raft::FetchSnapshotRequest r;
      r.replica_id = m.replica_id;
      r.current_leader_epoch = part.current_leader_epoch;
      r.snapshot_id = {part.snapshot_id.end_offset, part.snapshot_id.epoch};
      r.position = part.position;
      r.max_bytes = m.max_bytes;
      return r;
    }
    default:
      throw p::DecodeError("not a KRaft API");
  }
}

// ---- responses ----------------------------------------------------------------------------

namespace {

template <typename Resp, typename Body>
Bytes leader_and_error(int16_t version, const Body& b) {
  Resp m;
  auto& t = m.topics.emplace_back();
  t.topic_name = kMetadataTopic;
  auto& part = t.partitions.emplace_back();
  part.error_code = code(b.error);
  part.leader_id = b.leader_id;
  part.leader_epoch = b.leader_epoch;
  return encode(m, version);
}

}  // namespace

Bytes encode_response(int16_t api_key, int16_t version, const raft::MessageBody& body) {
  if (const auto* r = std::get_if<raft::VoteResponse>(&body)) {
    p::VoteResponse m;
    auto& t = m.topics.emplace_back();
    t.topic_name = kMetadataTopic;
    auto& part = t.partitions.emplace_back();
    part.error_code = code(r->error);
    part.leader_id = r->leader_id;
    part.leader_epoch = r->leader_epoch;
    part.vote_granted = r->vote_granted;
    return encode(m, version);
  }
  if (const auto* r = std::get_if<raft::BeginQuorumEpochResponse>(&body))
    return leader_and_error<p::BeginQuorumEpochResponse>(version, *r);
  if (const auto* r = std::get_if<raft::EndQuorumEpochResponse>(&body))
    return leader_and_error<p::EndQuorumEpochResponse>(version, *r);
  if (const auto* r = std::get_if<raft::FetchResponse>(&body)) {
    p::FetchResponse m;
    auto& t = m.responses.emplace_back();
    t.topic = kMetadataTopic;
    t.topic_id = metadata_topic_id();
    auto& part = t.partitions.emplace_back();
    part.error_code = code(r->error);
    part.high_watermark = r->high_watermark;
    part.log_start_offset = r->log_start_offset;
    part.current_leader.leader_id = r->leader_id;
    part.current_leader.leader_epoch = r->leader_epoch;
    if (r->diverging_epoch) {
      part.diverging_epoch.epoch = r->diverging_epoch->epoch;
      part.diverging_epoch.end_offset = r->diverging_epoch->offset;
    }
    if (r->snapshot_id) {
      part.snapshot_id.end_offset = r->snapshot_id->offset;
      part.snapshot_id.epoch = r->snapshot_id->epoch;
    }
    auto batches = std::make_shared<Bytes>(entries_to_batches(r->entries));
    part.records = p::Records::of(SharedBytes{batches, std::span<const std::byte>(*batches)});
    return encode(m, version);
  }
  if (const auto* r = std::get_if<raft::FetchSnapshotResponse>(&body)) {
    p::FetchSnapshotResponse m;
    auto& t = m.topics.emplace_back();
    t.name = kMetadataTopic;
    auto& part = t.partitions.emplace_back();
    part.error_code = code(r->error);
    part.snapshot_id.end_offset = r->snapshot_id.offset;
    part.snapshot_id.epoch = r->snapshot_id.epoch;
    part.current_leader.leader_id = r->leader_id;
    part.current_leader.leader_epoch = r->leader_epoch;
    part.size = r->size;
    part.position = r->position;
    part.unaligned_records = p::Records::of(SharedBytes::copy_of(storage::as_bytes(r->bytes)));
    return encode(m, version);
  }
  throw std::invalid_argument("not a KRaft response");
}

Bytes encode_describe_quorum(int16_t version, const raft::DescribeQuorumResponse& q, const std::vector<Voter>& voters) {
  p::DescribeQuorumResponse m;
  auto& t = m.topics.emplace_back();
  t.topic_name = kMetadataTopic;
  auto& part = t.partitions.emplace_back();
  part.error_code = code(q.error);
  if (q.error != Errc::none) part.error_message = std::string(raft::errc_name(q.error));
  else part.error_message = std::nullopt;
  m.error_message = std::nullopt;
  part.leader_id = q.leader_id;
  part.leader_epoch = q.leader_epoch;
  part.high_watermark = q.high_watermark;
  auto replicas = [](const std::vector<raft::ReplicaState>& in) {
    std::vector<p::DescribeQuorumResponse::ReplicaState> out;
    for (const auto& r : in) {
      p::DescribeQuorumResponse::ReplicaState s;
      s.replica_id = r.replica_id;
      s.log_end_offset = r.log_end_offset;
      s.last_fetch_timestamp = r.last_fetch_timestamp;
      s.last_caught_up_timestamp = r.last_caught_up_timestamp;
      out.push_back(s);
    }
    return out;
  };
  part.current_voters = replicas(q.current_voters);
  part.observers = replicas(q.observers);
  // The voters' endpoints exist from v2 on.
  for (const auto& v : version >= 2 ? voters : std::vector<Voter>{}) {
    auto& n = m.nodes.emplace_back();
    n.node_id = v.id;
    auto& l = n.listeners.emplace_back();
    l.name = "CONTROLLER";
    l.host = v.host;
    l.port = v.port;
  }
  return encode(m, version);
}

raft::MessageBody decode_response(int16_t api_key, int16_t version, std::span<const std::byte> body,
                                  const raft::MessageBody& request) {
  switch (api_key) {
    case p::VoteResponse::api_key: {
      auto m = decode<p::VoteResponse>(body, version);
      raft::VoteResponse r;
      r.pre_vote = std::get<raft::VoteRequest>(request).pre_vote;
      if (m.error_code != 0 && m.topics.empty()) {
        r.error = errc(m.error_code);
        return r;
      }
      const auto& part = only_partition(m.topics);
      r.error = errc(part.error_code);
      r.leader_id = part.leader_id;
      r.leader_epoch = part.leader_epoch;
      r.vote_granted = part.vote_granted;
      return r;
    }
    case p::BeginQuorumEpochResponse::api_key: {
      auto m = decode<p::BeginQuorumEpochResponse>(body, version);
      if (m.error_code != 0 && m.topics.empty()) return raft::BeginQuorumEpochResponse{errc(m.error_code)};
      const auto& part = only_partition(m.topics);
      return raft::BeginQuorumEpochResponse{errc(part.error_code), part.leader_id, part.leader_epoch};
    }
    case p::EndQuorumEpochResponse::api_key: {
      auto m = decode<p::EndQuorumEpochResponse>(body, version);
      if (m.error_code != 0 && m.topics.empty()) return raft::EndQuorumEpochResponse{errc(m.error_code)};
      const auto& part = only_partition(m.topics);
      return raft::EndQuorumEpochResponse{errc(part.error_code), part.leader_id, part.leader_epoch};
    }
    case p::FetchResponse::api_key: {
      auto m = decode<p::FetchResponse>(body, version);
      raft::FetchResponse r;
      if (m.error_code != 0 && m.responses.empty()) {
        r.error = errc(m.error_code);
        return r;
      }
      if (m.responses.size() != 1 || m.responses[0].partitions.size() != 1) not_metadata();
      const auto& part = m.responses[0].partitions[0];
      r.error = errc(part.error_code);
      r.leader_id = part.current_leader.leader_id;
      r.leader_epoch = part.current_leader.leader_epoch;
      r.high_watermark = part.high_watermark;
      r.log_start_offset = part.log_start_offset;
      if (part.diverging_epoch.epoch >= 0) r.diverging_epoch = raft::OffsetAndEpoch{part.diverging_epoch.end_offset,
                                                                                 part.diverging_epoch.epoch};
      if (part.snapshot_id.epoch >= 0 && part.snapshot_id.end_offset >= 0)
        r.snapshot_id = raft::OffsetAndEpoch{part.snapshot_id.end_offset, part.snapshot_id.epoch};
      if (!part.records.is_null) {
        Bytes bytes = part.records.to_bytes();
        r.entries = batches_to_entries(bytes);
      }
      return r;
    }
    case p::FetchSnapshotResponse::api_key: {
      auto m = decode<p::FetchSnapshotResponse>(body, version);
      raft::FetchSnapshotResponse r;
      if (m.error_code != 0 && m.topics.empty()) {
        r.error = errc(m.error_code);
        return r;
      }
      if (m.topics.size() != 1 || m.topics[0].partitions.size() != 1) not_metadata();
      const auto& part = m.topics[0].partitions[0];
      r.error = errc(part.error_code);
      r.leader_id = part.current_leader.leader_id;
      r.leader_epoch = part.current_leader.leader_epoch;
      r.snapshot_id = {part.snapshot_id.end_offset, part.snapshot_id.epoch};
      r.size = part.size;
      r.position = part.position;
      if (!part.unaligned_records.is_null) {
        Bytes bytes = part.unaligned_records.to_bytes();
        r.bytes.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      }
      return r;
    }
    default:
      throw p::DecodeError("not a KRaft API");
  }
}

raft::MessageBody error_response(int16_t api_key, raft::Errc error) {
  switch (api_key) {
    case p::VoteRequest::api_key: {
      raft::VoteResponse r;
      r.error = error;
      return r;
    }
    case p::BeginQuorumEpochRequest::api_key: {
      raft::BeginQuorumEpochResponse r;
      r.error = error;
      return r;
    }
    case p::EndQuorumEpochRequest::api_key: {
      raft::EndQuorumEpochResponse r;
      r.error = error;
      return r;
    }
    case p::FetchRequest::api_key: {
      raft::FetchResponse r;
      r.error = error;
      return r;
    }
    case p::FetchSnapshotRequest::api_key: {
      raft::FetchSnapshotResponse r;
      r.error = error;
      return r;
    }
    default:
      throw std::invalid_argument("not a KRaft API");
  }
}

raft::Errc response_error(const raft::MessageBody& body) {
  return std::visit(
      [](const auto& b) -> raft::Errc {
        if constexpr (requires { b.error; }) {
          return b.error;
        } else {
          return raft::Errc::none;
        }
      },
      body);
}

}  // namespace brokerd::quorum
