// AddPartitionsToTxn: a transactional producer names the partitions it is about to write
// (v0-3, one transaction, WRITE on the id and on each topic). v4+ batches transactions and is
// for brokers only (CLUSTER_ACTION): a partition leader checks with verify_only that a
// partition is in a producer's transaction before appending its first batch (KIP-890).
// A transaction with a partition refused (unknown, unauthorized) has nothing added: its other
// partitions answer OPERATION_NOT_ATTEMPTED, as Kafka answers.
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/protocol/messages/add_partitions_to_txn_request.h"
#include "brokerd/protocol/messages/add_partitions_to_txn_response.h"
#include "brokerd/transactions/transaction_coordinator.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {
namespace {

using protocol::AddPartitionsToTxnRequest;
using protocol::AddPartitionsToTxnResponse;
using protocol::ErrorCode;
using Topics = std::vector<AddPartitionsToTxnRequest::AddPartitionsToTxnTopic>;
using Results = std::vector<std::pair<transactions::TopicPartition, ErrorCode>>;

// The checks before the coordinator: each partition's refusal, or none for all.
Results refusals(const HandlerContext& ctx, const metadata::MetadataImage& image, const Topics& topics) {
  Results out;
  bool refused = false;
  for (const auto& t : topics) {
    const metadata::TopicMetadata* meta = image.topic(t.name);
    const bool allowed = authorized_topic(ctx, acl::Operation::write, t.name);
    for (int32_t p : t.partitions) {
      ErrorCode e = ErrorCode::none;
      if (!allowed) e = ErrorCode::topic_authorization_failed;
      else if (!meta || p < 0 || p >= meta->partition_count()) e = ErrorCode::unknown_topic_or_partition;
      refused = refused || e != ErrorCode::none;
      out.emplace_back(transactions::TopicPartition{t.name, p}, e);
    }
  }
  if (refused)
    for (auto& [tp, e] : out)
      if (e == ErrorCode::none) e = ErrorCode::operation_not_attempted;
  return refused ? out : Results{};
}

template <typename TopicResult>
std::vector<TopicResult> by_topic(const Results& results, ErrorCode (*map)(ErrorCode, int16_t), int16_t version) {
  std::vector<TopicResult> out;
  for (const auto& [tp, e] : results) {
    auto it = std::find_if(out.begin(), out.end(), [&](const TopicResult& t) { return t.name == tp.topic; });
    if (it == out.end()) {
      out.emplace_back().name = tp.topic;
      it = out.end() - 1;
    }
    auto& r = it->results_by_partition.emplace_back();
    r.partition_index = tp.partition;
    r.partition_error_code = protocol::code(map(e, version));
  }
  return out;
}

ErrorCode for_client(ErrorCode e, int16_t version) {
  return transactions::fenced_error_for(e, version >= 2);
}

boost::asio::awaitable<Results> one_transaction(HandlerContext& ctx, const metadata::MetadataImage& image,
                                                const std::string& id, int64_t producer_id, int16_t epoch,
                                                const Topics& topics, bool verify_only) {
  auto& svc = ctx.services;
  Results named;
  for (const auto& t : topics)
    for (int32_t p : t.partitions) named.emplace_back(transactions::TopicPartition{t.name, p}, ErrorCode::none);
  if (ctx.version < 4 && !authorized(ctx, acl::Operation::write, acl::ResourceType::transactional_id, id)) {
    for (auto& [tp, e] : named) e = ErrorCode::transactional_id_authorization_failed;
    co_return named;
  }
  if (ctx.version < 4) {
    if (auto refused = refusals(ctx, image, topics); !refused.empty()) co_return refused;
  }
  transactions::AddPartitionsRequest req;
  req.transactional_id = id;
  req.producer_id = producer_id;
  req.producer_epoch = epoch;
  for (const auto& [tp, e] : named) req.partitions.push_back(tp);
  // From a broker (v4+), an add is KIP-890 part 2's: a transaction.version 2 producer's Produce
  // v12 or TxnOffsetCommit v5 added the partition itself.
  if (ctx.version >= 4) req.client_txn_version = transactions::kTxnVersion2;
  if (verify_only) co_return co_await svc.transactions.verify_partitions(std::move(req));
  co_return co_await svc.transactions.add_partitions(std::move(req), ctx.version >= 4);
}

}  // namespace

boost::asio::awaitable<net::Response> handle_add_partitions_to_txn(HandlerContext& ctx) {
  auto req = ctx.decode<AddPartitionsToTxnRequest>();
  auto image = ctx.services.metadata.image();
  AddPartitionsToTxnResponse resp;
  if (ctx.version < 4) {
    Results r = co_await one_transaction(ctx, *image, req.v3_and_below_transactional_id, req.v3_and_below_producer_id,
                                         req.v3_and_below_producer_epoch, req.v3_and_below_topics, false);
    resp.results_by_topic_v3_and_below =
        by_topic<AddPartitionsToTxnResponse::AddPartitionsToTxnTopicResult>(r, for_client, ctx.version);
    co_return ctx.respond(resp);
  }
  if (!authorized_cluster(ctx, acl::Operation::cluster_action)) {
    resp.error_code = protocol::code(ErrorCode::cluster_authorization_failed);
    co_return ctx.respond(resp);
  }
  for (const auto& t : req.transactions) {
    Results r = co_await one_transaction(ctx, *image, t.transactional_id, t.producer_id, t.producer_epoch, t.topics,
                                         t.verify_only);
    auto& out = resp.results_by_transaction.emplace_back();
    out.transactional_id = t.transactional_id;
    out.topic_results = by_topic<AddPartitionsToTxnResponse::AddPartitionsToTxnTopicResult>(r, for_client, ctx.version);
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
