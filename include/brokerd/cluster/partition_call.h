#pragma once
// A blocking call into a hosted partition from a thread outside the reactors (the replica
// and mirror fetchers): runs fn on tp's home shard with its partition, then hands the
// replication core's outputs on (PartitionManager::after_replica_input). The future holds
// nullopt when this node does not host tp.
#include <boost/asio/post.hpp>

#include <future>
#include <memory>
#include <optional>

#include "brokerd/cluster/partition_manager.h"

namespace brokerd::cluster {

template <typename Fn>
auto call_on_partition(PartitionManager& pm, const TopicPartition& tp, Fn fn) {
  using R = decltype(fn(std::declval<Partition&>()));
  auto promise = std::make_shared<std::promise<std::optional<R>>>();
  auto future = promise->get_future();
  boost::asio::post(pm.executor_of(tp), [&pm, tp, fn = std::move(fn), promise]() mutable {
    Partition* p = pm.local(tp);
    if (!p) {
      promise->set_value(std::nullopt);
      return;
    }
    std::optional<R> r = fn(*p);
    pm.after_replica_input(tp, *p);
    promise->set_value(std::move(r));
  });
  return future;
}

}  // namespace brokerd::cluster
