#pragma once
// Where a node answers a metadata change it forwarded to the active controller: once its own
// metadata image holds the change, so that a client reading from the same node right after
// the answer sees what it wrote. The controller's answer is the Kafka response of the request
// and does not say at which offset of the metadata log the change committed. So the node asks
// the controller that answered, on the same connection, for its high watermark (DescribeQuorum):
// the controller applied the change before it answered, so the change lies below that high
// watermark, which never goes back while the controller's process lives (the connection being
// the same one says the process is). The node then waits until its image holds every entry
// below it.
#include <cstdint>
#include <optional>
#include <span>

#include "brokerd/common/bytes.h"

namespace brokerd::controller {

inline constexpr int16_t kDescribeQuorum = 55, kHighWatermarkVersion = 0;

// The DescribeQuorum request (at kHighWatermarkVersion) that asks for the metadata log.
Bytes high_watermark_request();

// The high watermark in node `asked`'s answer (at kHighWatermarkVersion) to that request, when
// it answered as the leader of the metadata log; nullopt otherwise (it does not lead, it
// refused, or the answer does not decode).
std::optional<int64_t> leader_high_watermark(std::span<const std::byte> answer, int32_t asked);

// Whether a request forwarded as is (ControllerChannel::forward) may change the metadata, so
// that its answer waits for this node's image: every request but the reads the controller
// answers (DescribeQuorum, ListPartitionReassignments).
bool changes_metadata(int16_t api_key);

}  // namespace brokerd::controller
