#pragma once
// The follower side of replication on a node: for each leader it follows partitions of, up to
// num.replica.fetchers threads, each with one connection to that leader's client listener,
// carrying many partitions per request. A round asks each partition's replication core (on
// its home shard) what to send — OffsetForLeaderEpoch while it looks for the point where its
// log agrees with the leader's, then Fetch — sends one request of each kind, and hands the
// answers back to the cores, which append the leader's batches or truncate. Each fetcher
// keeps an incremental fetch session with its leader (fetcher/fetch_session.h): a round
// names only partitions whose fetch moved, and the answer only partitions with news.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "brokerd/security/sasl_client.h"

namespace brokerd::metadata {
class MetadataStore;
}  // namespace brokerd::metadata
namespace brokerd::partitions {
class PartitionManager;
}  // namespace brokerd::partitions

namespace brokerd::metrics {
class Counter;
}  // namespace brokerd::metrics

namespace brokerd::fetcher {

struct FetcherOptions {
  int32_t node_id = 0;
  int32_t fetchers_per_leader = 1;            // num.replica.fetchers
  int32_t partition_max_bytes = 1 << 20;      // replica.fetch.max.bytes
  int32_t response_max_bytes = 10 << 20;      // replica.fetch.response.max.bytes
  int32_t wait_max_ms = 500;                  // replica.fetch.wait.max.ms
  int32_t backoff_ms = 200;                   // replica.fetch.backoff.ms
  metrics::Counter* bytes_replicated = nullptr;  // bytes of batches fetched, when set
  security::ClientCredentials credentials;    // presented to the leaders' inter-broker listener
};

class ReplicaFetchers {
 public:
  ReplicaFetchers(FetcherOptions options, partitions::PartitionManager& partitions, metadata::MetadataStore& metadata);
  ~ReplicaFetchers();
  ReplicaFetchers(const ReplicaFetchers&) = delete;
  ReplicaFetchers& operator=(const ReplicaFetchers&) = delete;

  // Starts the thread that starts a fetcher for each leader as partitions come to follow it.
  void start();
  // Ends every fetcher after its current request (at most replica.fetch.wait.max.ms plus a
  // round trip) and joins them.
  void stop();

 private:
  void supervise();
  void run(int32_t leader, int32_t index);
  // Sleeps up to `ms`, less if stop() is called.
  void pause(int64_t ms);

  FetcherOptions options_;
  partitions::PartitionManager& partitions_;
  metadata::MetadataStore& metadata_;
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread supervisor_;
  std::map<std::pair<int32_t, int32_t>, std::thread> workers_;  // (leader, index)
};

}  // namespace brokerd::fetcher
