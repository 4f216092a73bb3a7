// TxnOffsetCommit: a transactional producer sends a group's positions to its transaction
// (after AddOffsetsToTxn). WRITE on the transactional id, READ on the group and on each topic.
// The group coordinator writes them as the producer's transactional batch; they become the
// group's committed offsets when the transaction commits (its marker on the offsets
// partition), and are dropped if it aborts. v3+ names the member and generation, so a zombie
// of an older generation is fenced (KIP-447).
//
// KIP-890: before they are written, the producer's transaction coordinator is asked whether the
// group's offsets partition is in the producer's ongoing transaction (part 1, with
// transaction.partition.verification.enable), or, from a transaction.version 2 producer (v5),
// adds it to the transaction, as AddOffsetsToTxn did before.
#include "brokerd/group/group_coordinator.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/protocol/messages/txn_offset_commit_request.h"
#include "brokerd/protocol/messages/txn_offset_commit_response.h"
#include "brokerd/transactions/coordinator_rules.h"
#include "brokerd/transactions/partition_verifier.h"
#include "brokerd/transactions/transaction_coordinator.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

using protocol::ErrorCode;

boost::asio::awaitable<net::Response> handle_txn_offset_commit(HandlerContext& ctx) {
  auto req = ctx.decode<protocol::TxnOffsetCommitRequest>();
  auto image = ctx.services.metadata.image();
  group::TxnCommitRequest commit;
  commit.group_id = req.group_id;
  commit.generation = req.generation_id;
  commit.member_id = req.member_id;
  commit.instance_id = req.group_instance_id;
  commit.producer_id = req.producer_id;
  commit.producer_epoch = req.producer_epoch;

  protocol::TxnOffsetCommitResponse resp;
  std::vector<std::pair<size_t, size_t>> slots;
  const bool txn_ok = authorized(ctx, acl::Operation::write, acl::ResourceType::transactional_id, req.transactional_id);
  const bool group_ok = authorized_group(ctx, acl::Operation::read, req.group_id);
  for (const auto& t : req.topics) {
    auto& rt = resp.topics.emplace_back();
    rt.name = t.name;
    const metadata::TopicMetadata* meta = image->topic(t.name);
    const bool topic_ok = authorized_topic(ctx, acl::Operation::read, t.name);
    for (const auto& p : t.partitions) {
      auto& rp = rt.partitions.emplace_back();
      rp.partition_index = p.partition_index;
      ErrorCode e = ErrorCode::none;
      if (!txn_ok) e = ErrorCode::transactional_id_authorization_failed;
      else if (!group_ok) e = ErrorCode::group_authorization_failed;
      else if (!topic_ok) e = ErrorCode::topic_authorization_failed;
      else if (!meta || p.partition_index < 0 || p.partition_index >= meta->partition_count())
        e = ErrorCode::unknown_topic_or_partition;
      rp.error_code = protocol::code(e);
      if (e != ErrorCode::none) continue;
      group::OffsetEntry entry;
      entry.offset = p.committed_offset;
      entry.leader_epoch = p.committed_leader_epoch;
      entry.metadata = p.committed_metadata.value_or("");
      commit.offsets.emplace_back(group::OffsetKey{t.name, p.partition_index}, std::move(entry));
      slots.emplace_back(resp.topics.size() - 1, rt.partitions.size() - 1);
    }
  }
  if (!commit.offsets.empty()) {
    const bool add = ctx.version >= 5;
    if (add || ctx.services.transactions.settings().verify_partitions) {
      using Check = transactions::PartitionVerifier::Check;
      // Named, not temporaries of the co_await expression (GCC 12, see net/run_on.h).
      std::vector<transactions::TopicPartition> asked;
      asked.push_back({std::string(group::kOffsetsTopic), ctx.services.groups.partition_for(req.group_id)});
      const auto check = add ? Check::add : Check::verify;
      std::string id = req.transactional_id;
      auto answers = co_await ctx.services.txn_verifier.verify(std::move(id), req.producer_id, req.producer_epoch,
                                                               std::move(asked), check);
      ErrorCode e = answers.empty() ? ErrorCode::not_enough_replicas : answers.front().second;
      // In TxnOffsetCommit's terms: a coordinator that could not tell is retried; clients before
      // v4 do not know TRANSACTION_ABORTABLE.
      if (e == ErrorCode::not_enough_replicas) e = ErrorCode::coordinator_not_available;
      if (e == ErrorCode::transaction_abortable && ctx.version < 4) e = ErrorCode::invalid_txn_state;
      if (e != ErrorCode::none) {
        for (const auto& [t, p] : slots)
          resp.topics[t].partitions[p].error_code = protocol::code(transactions::fenced_error_for(e, ctx.version >= 2));
        co_return ctx.respond(resp);
      }
    }
    auto errors = co_await ctx.services.groups.txn_commit(std::move(commit));
    for (size_t i = 0; i < errors.size(); ++i)
      resp.topics[slots[i].first].partitions[slots[i].second].error_code =
          protocol::code(transactions::fenced_error_for(errors[i], ctx.version >= 2));
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
