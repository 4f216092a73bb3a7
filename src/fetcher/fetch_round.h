#pragma once
// One round of a replica fetcher against one leader: ask the cores, send, hand back. Fetches
// go through the fetcher's incremental session with that leader.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "brokerd/partitions/topic_partition.h"
#include "brokerd/controller/controller_client.h"
#include "brokerd/fetcher/fetch_session.h"
#include "brokerd/fetcher/replica_fetchers.h"

namespace brokerd::fetcher {

// failed: a request got no answer or a top-level error (the caller backs off); idle: no
// core had anything to send. An error for one partition (its topic just deleted, a leader
// epoch not yet known here) is that partition's alone: it sits out replica.fetch.backoff.ms
// (`held`, partition -> wall-clock ms until which it is not asked; while out, the session
// forgets it) and the round goes on for the others.
enum class RoundResult { ok, idle, failed };
using HeldPartitions = std::unordered_map<partitions::TopicPartition, int64_t>;
RoundResult fetch_round(const FetcherOptions& options, partitions::PartitionManager& partitions,
                        const quorum::Voter& leader, const std::vector<partitions::TopicPartition>& followed,
                        FollowerFetchSession& session, HeldPartitions& held, controller::ControllerClient& client);

}  // namespace brokerd::fetcher
