#pragma once
// One round of a replica fetcher against one leader: ask the cores, send, hand back. Fetches
// go through the fetcher's incremental session with that leader.
#include <cstdint>
#include <vector>

#include "brokerd/cluster/topic_partition.h"
#include "brokerd/controller/controller_client.h"
#include "brokerd/fetcher/fetch_session.h"
#include "brokerd/fetcher/replica_fetchers.h"

namespace brokerd::fetcher {

// failed: a request got no answer or an error (the caller backs off); idle: no core had
// anything to send.
enum class RoundResult { ok, idle, failed };
RoundResult fetch_round(const FetcherOptions& options, cluster::PartitionManager& partitions,
                        const quorum::Voter& leader, const std::vector<cluster::TopicPartition>& followed,
                        FollowerFetchSession& session, controller::ControllerClient& client);

}  // namespace brokerd::fetcher
