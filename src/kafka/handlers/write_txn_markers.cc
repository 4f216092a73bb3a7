// WriteTxnMarkers: a transaction coordinator ends a transaction in each of its partitions.
// Every partition's leader writes the COMMIT or ABORT marker on its home shard and answers
// once every in-sync replica has it (as an acks=all produce), else REQUEST_TIMED_OUT.
//
// Internal topics (__consumer_offsets, __transaction_state) take markers too: clients cannot
// produce to them, but markers come from coordinators, with CLUSTER_ACTION on the cluster.
// Once a marker is on an offsets partition's in-sync replicas, the group coordinator makes
// the offsets the transaction sent there committed (or drops them).
#include <algorithm>
#include <chrono>

#include "brokerd/common/clock.h"
#include "brokerd/group/group_coordinator.h"
#include "brokerd/metadata/metadata_store.h"
#include "brokerd/metrics/broker_metrics.h"
#include "brokerd/partitions/fan_out.h"
#include "brokerd/partitions/partition_manager.h"
#include "brokerd/protocol/messages/write_txn_markers_request.h"
#include "brokerd/protocol/messages/write_txn_markers_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {
namespace {

using protocol::ErrorCode;
using protocol::WriteTxnMarkersRequest;
using protocol::WriteTxnMarkersResponse;

// Kafka appends markers with the broker's request.timeout.ms (30 s by default).
constexpr int64_t kMarkerTimeoutMs = 30'000;

// Writes one marker on tp's leader and, when written, starts its acks=all wait on `slot`.
ErrorCode write_marker(partitions::PartitionManager& pm, const partitions::TopicPartition& tp,
                       const storage::TxnMarker& marker, int64_t deadline_ms,
                       const std::shared_ptr<partitions::AckSlot>& slot) {
  partitions::Partition* p = pm.leading(tp);
  if (!p) return pm.not_served(tp);
  if (auto e = p->replica().check_append(-1); e != ErrorCode::none) return e;
  if (pm.storage_bugs().txn_skip_marker && marker.type == storage::ControlType::commit && tp.partition == 0 &&
      !tp.topic.starts_with("__")) {
    slot->done.store(true);  // test builds (inject.bug txn-skip-marker): answered, never written
    return ErrorCode::none;
  }
  const int64_t now = wall_clock_ms();
  auto res = p->append_marker(marker, now);
  if (res.error != ErrorCode::none) return res.error;
  p->await_replication(pm.next_ack_id(), res.last_offset, deadline_ms, slot, now);
  pm.after_replica_input(tp, *p);
  return ErrorCode::none;
}

}  // namespace

boost::asio::awaitable<net::Response> handle_write_txn_markers(HandlerContext& ctx) {
  auto req = ctx.decode<WriteTxnMarkersRequest>();
  auto& svc = ctx.services;
  auto image = svc.metadata.image();
  const bool allowed = authorized_cluster(ctx, acl::Operation::cluster_action);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kMarkerTimeoutMs);
  const int64_t deadline_ms = wall_clock_ms() + kMarkerTimeoutMs;
  auto waiter = svc.partitions.purgatory().waiter(co_await boost::asio::this_coro::executor);

  // The answer mirrors the request; each partition that can be written gets a task and a slot.
  WriteTxnMarkersResponse resp;
  struct Pending {
    int16_t* error;
    std::shared_ptr<partitions::AckSlot> slot;
    int32_t offsets_partition;  // -1 unless tp is a partition of __consumer_offsets
    int64_t producer_id;
    bool commit;
  };
  std::vector<Pending> pending;
  std::vector<partitions::FanOutTask<ErrorCode>> tasks;
  resp.markers.reserve(req.markers.size());
  for (const auto& m : req.markers) {
    auto& mr = resp.markers.emplace_back();
    mr.producer_id = m.producer_id;
    mr.topics.reserve(m.topics.size());
    const storage::TxnMarker marker{m.producer_id, m.producer_epoch, m.coordinator_epoch,
                                    m.transaction_result ? storage::ControlType::commit : storage::ControlType::abort};
    for (const auto& t : m.topics) {
      auto& tr = mr.topics.emplace_back();
      tr.name = t.name;
      tr.partitions.reserve(t.partition_indexes.size());
      const metadata::TopicMetadata* meta = image->topic(t.name);
      for (int32_t index : t.partition_indexes) {
        auto& pr = tr.partitions.emplace_back();
        pr.partition_index = index;
        if (!allowed) {
          pr.error_code = protocol::code(ErrorCode::cluster_authorization_failed);
        } else if (!meta || index < 0 || index >= meta->partition_count()) {
          pr.error_code = protocol::code(ErrorCode::unknown_topic_or_partition);
        } else {
          auto slot = std::make_shared<partitions::AckSlot>();
          slot->waiter = waiter;
          pending.push_back({nullptr, slot, t.name == group::kOffsetsTopic ? index : -1, m.producer_id,
                             m.transaction_result});
          partitions::TopicPartition tp{t.name, index};
          tasks.push_back({svc.partitions.executor_of(tp), [pm = &svc.partitions, tp, marker, deadline_ms, slot] {
                             return write_marker(*pm, tp, marker, deadline_ms, slot);
                           }});
        }
      }
    }
  }
  // The answer's vectors are complete: their addresses stay.
  {
    size_t k = 0;
    for (auto& mr : resp.markers)
      for (auto& tr : mr.topics)
        for (auto& pr : tr.partitions)
          if (pr.error_code == 0 && k < pending.size()) pending[k++].error = &pr.error_code;
  }
  auto written = co_await partitions::fan_out(std::move(tasks));
  for (size_t i = 0; i < written.size(); ++i) {
    if (written[i] == ErrorCode::none) continue;
    *pending[i].error = protocol::code(written[i]);
    pending[i].slot.reset();  // refused: nothing to wait for
  }
  auto all_done = [&] {
    return std::all_of(pending.begin(), pending.end(), [](const Pending& p) { return !p.slot || p.slot->done.load(); });
  };
  while (true) {
    waiter->reset();
    if (all_done() || std::chrono::steady_clock::now() >= deadline || svc.partitions.purgatory().stopped()) break;
    co_await waiter->wait_until(deadline);
  }
  bool any_error = false;
  for (auto& p : pending) {
    if (p.slot) {
      const auto code = p.slot->done ? static_cast<ErrorCode>(p.slot->error.load()) : ErrorCode::request_timed_out;
      *p.error = protocol::code(code);
    }
    any_error = any_error || *p.error != 0;
    if (*p.error == 0 && p.offsets_partition >= 0)
      svc.groups.complete_txn(p.offsets_partition, p.producer_id, p.commit);
  }
  if (any_error || !allowed) svc.metrics.api(ctx.request.api_key).errors.add();
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
