#pragma once
// fan_out: run plain callables on other executors (partition home shards) and resume the
// calling coroutine when every one has finished. The tasks of one executor run as one
// posted job, in the order given (a request spanning 20,000 partitions costs a post per
// shard, not per partition). All jobs are posted before the caller first suspends, so two
// requests fanned out in turn reach each shard in the same order: this is what keeps
// per-partition order for pipelined produce requests. The jobs' time is charged to the
// caller's request when its time is counted (net/request_time.h).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

#include "brokerd/net/request_time.h"

namespace brokerd::partitions {

template <typename R>
struct FanOutTask {
  boost::asio::any_io_executor executor;
  std::function<R()> run;
};

template <typename R>
boost::asio::awaitable<std::vector<R>> fan_out(std::vector<FanOutTask<R>> tasks) {
  struct State {
    State(boost::asio::any_io_executor ex, size_t tasks, size_t jobs)
        : timer(ex, boost::asio::steady_timer::time_point::max()), results(tasks), errors(tasks), remaining(jobs) {}
    boost::asio::steady_timer timer;
    std::vector<R> results;
    std::vector<std::exception_ptr> errors;
    std::atomic<size_t> remaining;
    std::atomic<bool> done{false};
  };
  auto caller = co_await boost::asio::this_coro::executor;
  if (tasks.empty()) co_return std::vector<R>{};
  // The tasks by executor (a node has few shards: a linear search is enough).
  std::vector<std::pair<boost::asio::any_io_executor, std::vector<size_t>>> jobs;
  for (size_t i = 0; i < tasks.size(); ++i) {
    auto job = std::find_if(jobs.begin(), jobs.end(), [&](const auto& j) { return j.first == tasks[i].executor; });
    if (job == jobs.end()) job = jobs.insert(jobs.end(), {tasks[i].executor, {}});
    job->second.push_back(i);
  }
  auto state = std::make_shared<State>(caller, tasks.size(), jobs.size());
  auto shared_tasks = std::make_shared<std::vector<FanOutTask<R>>>(std::move(tasks));
  for (auto& [executor, indexes] : jobs) {
    boost::asio::post(net::charging_current(executor), [state, caller, shared_tasks, indexes = std::move(indexes)]() mutable {
      for (size_t i : indexes) {
        try {
          state->results[i] = (*shared_tasks)[i].run();
        } catch (...) {
          state->errors[i] = std::current_exception();
        }
      }
      if (state->remaining.fetch_sub(1) == 1) {
        boost::asio::post(caller, [state] {
          state->done = true;
          state->timer.cancel();
        });
      }
    });
  }
  while (!state->done) co_await state->timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
  for (auto& e : state->errors)
    if (e) std::rethrow_exception(e);
  co_return std::move(state->results);
}

}  // namespace brokerd::partitions
