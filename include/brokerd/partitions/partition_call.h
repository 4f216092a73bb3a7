#pragma once
// A blocking call into a hosted partition from a thread outside the reactors (the replica
// and mirror fetchers): runs fn on tp's home shard with its partition, then hands the
// replication core's outputs on (PartitionManager::after_replica_input). The future holds
// nullopt when this node does not host tp.
//
// call_on_partitions does the same for many partitions with one posted job per shard (a
// follower of 80,000 partitions costs a post per shard, not per partition) and one future
// for all the results, in the order of `tps`.
#include <boost/asio/post.hpp>

#include <atomic>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "brokerd/partitions/partition_manager.h"

namespace brokerd::partitions {

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

// fn(i, partition) for each tps[i] hosted here.
template <typename Fn>
auto call_on_partitions(PartitionManager& pm, std::span<const TopicPartition> tps, Fn fn) {
  using R = decltype(fn(size_t{0}, std::declval<Partition&>()));
  struct State {
    explicit State(size_t n) : results(n) {}
    std::vector<std::optional<R>> results;
    std::atomic<size_t> remaining{0};
    std::promise<std::vector<std::optional<R>>> promise;
  };
  auto state = std::make_shared<State>(tps.size());
  auto future = state->promise.get_future();
  std::vector<std::vector<size_t>> by_shard(pm.shards());
  for (size_t i = 0; i < tps.size(); ++i) by_shard[pm.shard_of(tps[i])].push_back(i);
  size_t jobs = 0;
  for (const auto& s : by_shard) jobs += s.empty() ? 0 : 1;
  if (jobs == 0) {
    state->promise.set_value({});
    return future;
  }
  state->remaining = jobs;
  auto shared_fn = std::make_shared<Fn>(std::move(fn));
  for (auto& indexes : by_shard) {
    if (indexes.empty()) continue;
    const auto executor = pm.executor_of(tps[indexes.front()]);
    boost::asio::post(executor, [&pm, tps, state, shared_fn, indexes = std::move(indexes)] {
      for (size_t i : indexes) {
        Partition* p = pm.local(tps[i]);
        if (!p) continue;
        state->results[i] = (*shared_fn)(i, *p);
        pm.after_replica_input(tps[i], *p);
      }
      if (state->remaining.fetch_sub(1) == 1) state->promise.set_value(std::move(state->results));
    });
  }
  return future;
}

}  // namespace brokerd::partitions
