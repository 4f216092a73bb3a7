#pragma once
// Sends transaction markers to the leaders of the partitions a transaction wrote: one thread
// per destination broker, which gathers every marker queued for that broker into one
// WriteTxnMarkers request (Kafka's inter-broker call). A partition whose leader moved, or
// that answers a retriable error, is sent again to its leader of the moment after a short
// pause; a partition of a deleted topic counts as done. When every partition of a job has
// its marker, the job's `done` runs with none; when a leader says the coordinator was fenced
// (a newer coordinator epoch, a newer producer epoch) it runs with that error and the job
// ends: the newer coordinator finishes the transaction.
//
// Threading: send() from any thread; `done` runs on a sender thread.
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "brokerd/protocol/error_code.h"
#include "brokerd/security/sasl_client.h"
#include "brokerd/transactions/types.h"

namespace brokerd::metadata { class MetadataStore; }

namespace brokerd::transactions {

struct MarkerJob {
  ProducerId producer_id = kNoProducerId;
  ProducerEpoch producer_epoch = kNoProducerEpoch;
  TxnResult result = TxnResult::abort;
  int32_t coordinator_epoch = 0;
  int16_t txn_version = kTxnVersion0;
  std::vector<TopicPartition> partitions;
  std::function<void(protocol::ErrorCode)> done;
};

class MarkerSender {
 public:
  MarkerSender(int32_t node_id, metadata::MetadataStore& metadata, security::ClientCredentials credentials,
               int request_timeout_ms);
  ~MarkerSender();
  MarkerSender(const MarkerSender&) = delete;
  MarkerSender& operator=(const MarkerSender&) = delete;

  void send(MarkerJob job);
  // Ends the threads; jobs not done are dropped (their `done` never runs).
  void stop();

  // The marker round trips measured (any thread): count and total microseconds.
  uint64_t round_trips() const { return round_trips_.load(); }
  uint64_t round_trip_micros() const { return round_trip_micros_.load(); }

 private:
  struct Job;
  struct Pending {
    std::shared_ptr<Job> job;
    TopicPartition partition;
  };
  struct Destination;
  // Queues each partition for its leader of the moment; finishes those whose topic is gone.
  void route(std::vector<Pending> pending);
  void run(int32_t broker_id);
  void finish(const std::shared_ptr<Job>& job, protocol::ErrorCode error);

  int32_t node_id_;
  metadata::MetadataStore& metadata_;
  security::ClientCredentials credentials_;
  int request_timeout_ms_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<int32_t, std::unique_ptr<Destination>> destinations_;
  std::vector<Pending> unroutable_;  // no leader known yet: routed again by the retry pass
  std::thread retry_thread_;
  std::atomic<uint64_t> round_trips_{0};
  std::atomic<uint64_t> round_trip_micros_{0};
};

}  // namespace brokerd::transactions
