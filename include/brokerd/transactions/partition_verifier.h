#pragma once
// KIP-890, the partition leader's side: before a transactional batch opens a transaction on a
// partition, its leader asks the producer's transaction coordinator whether the partition is in
// the producer's ongoing transaction (part 1: verify), or, for a transaction.version 2 producer
// (Produce v12, TxnOffsetCommit v5), adds it to the transaction (part 2: add). The coordinator is this node's own
// TransactionCoordinator when this node leads the id's __transaction_state partition; another
// node is asked with AddPartitionsToTxn v5 (verify_only for part 1), one connection per
// coordinator, on the blocking pool.
//
// The answer per partition, in the produce request's terms: none; TRANSACTION_ABORTABLE (the
// partition is not in the transaction, or the transaction is not ongoing); INVALID_PRODUCER_EPOCH
// (fenced); NOT_ENOUGH_REPLICAS when the coordinator could not be asked or was not ready
// (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, CONCURRENT_TRANSACTIONS, ...), which producers
// retry, as Kafka maps them.
#include <boost/asio/awaitable.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "brokerd/protocol/error_code.h"
#include "brokerd/security/sasl_client.h"
#include "brokerd/transactions/types.h"

namespace brokerd::metadata { class MetadataStore; }
namespace brokerd::net { class BlockingPool; }
namespace brokerd::controller { class ControllerClient; }

namespace brokerd::transactions {

class TransactionCoordinator;

class PartitionVerifier {
 public:
  PartitionVerifier(int32_t node_id, metadata::MetadataStore& metadata, TransactionCoordinator& local,
                    net::BlockingPool& blocking, security::ClientCredentials credentials);
  ~PartitionVerifier();

  enum class Check : uint8_t { verify, add };
  boost::asio::awaitable<std::vector<std::pair<TopicPartition, protocol::ErrorCode>>> verify(
      std::string transactional_id, ProducerId producer_id, ProducerEpoch epoch, std::vector<TopicPartition> partitions,
      Check check = Check::verify);

  // Stops every call in progress (they answer NOT_ENOUGH_REPLICAS).
  void stop();

 private:
  struct Peer {
    std::mutex mu;
    std::unique_ptr<controller::ControllerClient> client;
  };
  std::vector<std::pair<TopicPartition, protocol::ErrorCode>> ask(int32_t coordinator, const std::string& id,
                                                                  ProducerId producer_id, ProducerEpoch epoch,
                                                                  const std::vector<TopicPartition>& partitions,
                                                                  Check check);
  Peer& peer(int32_t node);

  int32_t node_id_;
  metadata::MetadataStore& metadata_;
  TransactionCoordinator& local_;
  net::BlockingPool& blocking_;
  security::ClientCredentials credentials_;
  std::mutex mu_;
  std::map<int32_t, std::unique_ptr<Peer>> peers_;
};

// A coordinator's answer for one partition, as a produce request answers it (Kafka's mapping).
protocol::ErrorCode produce_error_for_verification(protocol::ErrorCode e);

}  // namespace brokerd::transactions
