#include "brokerd/fetcher/replica_fetchers.h"

#include <functional>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/common/logger.h"
#include "fetch_round.h"

namespace brokerd::fetcher {

ReplicaFetchers::ReplicaFetchers(FetcherOptions options, partitions::PartitionManager& partitions,
                                 metadata::MetadataStore& metadata)
    : options_(options), partitions_(partitions), metadata_(metadata) {}

ReplicaFetchers::~ReplicaFetchers() { stop(); }

void ReplicaFetchers::start() { supervisor_ = std::thread([this] { supervise(); }); }

void ReplicaFetchers::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (supervisor_.joinable()) supervisor_.join();
  for (auto& [_, t] : workers_)
    if (t.joinable()) t.join();
  workers_.clear();
}

void ReplicaFetchers::pause(int64_t ms) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return stopping_.load(); });
}

void ReplicaFetchers::supervise() {
  while (!stopping_) {
    for (int32_t leader : partitions_.followed_leaders()) {
      for (int32_t i = 0; i < options_.fetchers_per_leader; ++i) {
        auto key = std::make_pair(leader, i);
        if (workers_.contains(key)) continue;
        workers_.emplace(key, std::thread([this, leader, i] { run(leader, i); }));
      }
    }
    pause(100);
  }
}

void ReplicaFetchers::run(int32_t leader, int32_t index) {
  auto log = module_logger("replication");
  controller::ControllerClient client("brokerd-" + std::to_string(options_.node_id) + "-replica-fetcher",
                                      options_.wait_max_ms + 5000, options_.credentials);
  FollowerFetchSession session;
  HeldPartitions held;
  bool failing = false;
  std::shared_ptr<const std::vector<partitions::TopicPartition>> followed;
  std::vector<partitions::TopicPartition> mine;
  while (!stopping_) {
    // This fetcher's share of the partitions followed from the leader, picked again after a change.
    if (auto now_followed = partitions_.followed_from(leader); now_followed != followed) {
      followed = std::move(now_followed);
      mine.clear();
      for (const auto& tp : *followed)
        if (std::hash<partitions::TopicPartition>{}(tp) % static_cast<size_t>(options_.fetchers_per_leader) ==
            static_cast<size_t>(index))
          mine.push_back(tp);
    }
    const metadata::BrokerInfo* b = nullptr;
    auto image = metadata_.image();
    if (!mine.empty()) b = image->broker(leader);
    if (!b || b->host.empty()) {
      pause(100);
      continue;
    }
    const quorum::Voter to{leader, b->host, static_cast<uint16_t>(b->port)};
    const RoundResult result = fetch_round(options_, partitions_, to, mine, session, held, client);
    if (result == RoundResult::idle) {
      pause(20);
    } else if (result == RoundResult::failed) {
      if (!failing) log->info("fetching from broker {} failed; retrying every {} ms", leader, options_.backoff_ms);
      failing = true;
      pause(options_.backoff_ms);
    } else if (failing) {
      log->info("fetching from broker {} again", leader);
      failing = false;
    }
  }
}

}  // namespace brokerd::fetcher
