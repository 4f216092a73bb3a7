#include "brokerd/transactions/partition_verifier.h"

#include "brokerd/common/logger.h"
#include "brokerd/controller/controller_client.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/net/blocking_pool.h"
#include "brokerd/protocol/messages/add_partitions_to_txn_request.h"
#include "brokerd/protocol/messages/add_partitions_to_txn_response.h"
#include "brokerd/protocol/wire.h"
#include "brokerd/transactions/transaction_coordinator.h"

namespace brokerd::transactions {
namespace {

using protocol::ErrorCode;
using Answers = std::vector<std::pair<TopicPartition, ErrorCode>>;

constexpr int16_t kAddPartitionsToTxn = 24;
constexpr int16_t kVerifyVersion = 5;
constexpr int kVerifyTimeoutMs = 5000;

Answers all(const std::vector<TopicPartition>& partitions, ErrorCode e) {
  Answers out;
  for (const auto& tp : partitions) out.emplace_back(tp, e);
  return out;
}

}  // namespace

ErrorCode produce_error_for_verification(ErrorCode e) {
  switch (e) {
    case ErrorCode::none:
      return e;
    case ErrorCode::transaction_abortable:
    case ErrorCode::invalid_txn_state:
      return ErrorCode::transaction_abortable;
    case ErrorCode::producer_fenced:
    case ErrorCode::invalid_producer_epoch:
      return ErrorCode::invalid_producer_epoch;
    case ErrorCode::invalid_producer_id_mapping:
      return ErrorCode::invalid_producer_id_mapping;
    default:
      // The coordinator moved, is loading, is busy with the id, or could not be reached: the
      // producer retries.
      return ErrorCode::not_enough_replicas;
  }
}

PartitionVerifier::PartitionVerifier(int32_t node_id, metadata::MetadataStore& metadata,
                                     TransactionCoordinator& local, net::BlockingPool& blocking,
                                     security::ClientCredentials credentials)
    : node_id_(node_id), metadata_(metadata), local_(local), blocking_(blocking), credentials_(std::move(credentials)) {}

PartitionVerifier::~PartitionVerifier() = default;

void PartitionVerifier::stop() {
  std::lock_guard lock(mu_);
  for (auto& [id, p] : peers_)
    if (p->client) p->client->interrupt();
}

PartitionVerifier::Peer& PartitionVerifier::peer(int32_t node) {
  std::lock_guard lock(mu_);
  auto& p = peers_[node];
  if (!p) {
    p = std::make_unique<Peer>();
    p->client = std::make_unique<controller::ControllerClient>("brokerd-" + std::to_string(node_id_) + "-txn-verify",
                                                               kVerifyTimeoutMs, credentials_);
  }
  return *p;
}

boost::asio::awaitable<Answers> PartitionVerifier::verify(std::string id, ProducerId producer_id, ProducerEpoch epoch,
                                                          std::vector<TopicPartition> partitions, Check check) {
  auto image = metadata_.image();
  const metadata::TopicMetadata* t = image->topic(std::string(kTransactionStateTopic));
  const auto* a = t ? t->partition(partition_for(id, t->partition_count())) : nullptr;
  if (!a || a->leader < 0) co_return all(partitions, ErrorCode::not_enough_replicas);
  Answers answers;
  if (a->leader == node_id_) {
    AddPartitionsRequest req;
    req.transactional_id = std::move(id);
    req.producer_id = producer_id;
    req.producer_epoch = epoch;
    req.partitions = partitions;
    if (check == Check::add) {
      req.client_txn_version = kTxnVersion2;
      answers = co_await local_.add_partitions(std::move(req), true);
    } else {
      answers = co_await local_.verify_partitions(std::move(req));
    }
  } else {
    auto ask_remote = [this, coordinator = a->leader, id = std::move(id), producer_id, epoch, partitions, check] {
      return ask(coordinator, id, producer_id, epoch, partitions, check);
    };
    answers = co_await blocking_.run(std::move(ask_remote));
  }
  for (auto& [tp, e] : answers) e = produce_error_for_verification(e);
  co_return answers;
}

Answers PartitionVerifier::ask(int32_t coordinator, const std::string& id, ProducerId producer_id,
                               ProducerEpoch epoch, const std::vector<TopicPartition>& partitions, Check check) {
  auto image = metadata_.image();
  const metadata::BrokerInfo* b = image->broker(coordinator);
  if (!b || b->host.empty()) return all(partitions, ErrorCode::coordinator_not_available);
  protocol::AddPartitionsToTxnRequest req;
  auto& txn = req.transactions.emplace_back();
  txn.transactional_id = id;
  txn.producer_id = producer_id;
  txn.producer_epoch = epoch;
  txn.verify_only = check == Check::verify;
  for (const auto& tp : partitions) {
    auto it = std::find_if(txn.topics.begin(), txn.topics.end(), [&](const auto& x) { return x.name == tp.topic; });
    if (it == txn.topics.end()) {
      txn.topics.emplace_back().name = tp.topic;
      it = txn.topics.end() - 1;
    }
    it->partitions.push_back(tp.partition);
  }
  protocol::Writer w;
  req.encode(w, kVerifyVersion);
  const Bytes body = std::move(w).finish_bytes();
  Peer& p = peer(coordinator);
  std::lock_guard lock(p.mu);
  auto resp = p.client->call({coordinator, b->host, static_cast<uint16_t>(b->port)}, kAddPartitionsToTxn,
                             kVerifyVersion, body);
  if (!resp) return all(partitions, ErrorCode::coordinator_not_available);
  try {
    protocol::Reader r(resp->data);
    protocol::AddPartitionsToTxnResponse answer;
    answer.decode(r, kVerifyVersion);
    if (answer.error_code != 0) return all(partitions, static_cast<ErrorCode>(answer.error_code));
    Answers out = all(partitions, ErrorCode::coordinator_not_available);
    for (const auto& result : answer.results_by_transaction)
      for (const auto& topic : result.topic_results)
        for (const auto& part : topic.results_by_partition)
          for (auto& [tp, e] : out)
            if (tp.topic == topic.name && tp.partition == part.partition_index)
              e = static_cast<ErrorCode>(part.partition_error_code);
    return out;
  } catch (const protocol::DecodeError& e) {
    module_logger("transactions")->warn("coordinator {} sent a malformed verification answer: {}", coordinator,
                                        e.what());
    p.client->close();
    return all(partitions, ErrorCode::coordinator_not_available);
  }
}

}  // namespace brokerd::transactions
