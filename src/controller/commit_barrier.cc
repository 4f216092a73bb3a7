#include "controller/commit_barrier.h"

#include "brokerd/protocol/messages/describe_quorum_request.h"
#include "brokerd/protocol/messages/describe_quorum_response.h"
#include "brokerd/protocol/wire.h"
#include "brokerd/quorum/kraft_codec.h"

namespace brokerd::controller {
namespace {

constexpr int16_t kListPartitionReassignments = 46;

}  // namespace

Bytes high_watermark_request() {
  protocol::DescribeQuorumRequest req;
  auto& t = req.topics.emplace_back();
  t.topic_name = quorum::kMetadataTopic;
  t.partitions.emplace_back().partition_index = 0;
  protocol::Writer w;
  req.encode(w, kHighWatermarkVersion);
  return std::move(w).finish_bytes();
}

std::optional<int64_t> leader_high_watermark(std::span<const std::byte> answer, int32_t asked) {
  protocol::DescribeQuorumResponse resp;
  try {
    protocol::Reader r(answer);
    resp.decode(r, kHighWatermarkVersion);
  } catch (const protocol::DecodeError&) {
    return std::nullopt;
  }
  if (resp.error_code != 0 || resp.topics.size() != 1 || resp.topics[0].partitions.size() != 1) return std::nullopt;
  const auto& p = resp.topics[0].partitions[0];
  if (p.error_code != 0 || p.leader_id != asked || p.high_watermark < 0) return std::nullopt;
  return p.high_watermark;
}

bool changes_metadata(int16_t api_key) { return api_key != kDescribeQuorum && api_key != kListPartitionReassignments; }

}  // namespace brokerd::controller
