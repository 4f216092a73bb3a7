#pragma once
// fan_out: run plain callables on other executors (partition home shards) and resume the
// calling coroutine when every one has finished. All tasks are posted before the caller
// first suspends, so two requests fanned out in turn reach each shard in the same order:
// this is what keeps per-partition order for pipelined produce requests.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

namespace brokerd::cluster {

template <typename R>
struct FanOutTask {
  boost::asio::any_io_executor executor;
  std::function<R()> run;
};

template <typename R>
boost::asio::awaitable<std::vector<R>> fan_out(std::vector<FanOutTask<R>> tasks) {
  struct State {
    explicit State(boost::asio::any_io_executor ex, size_t n)
        : timer(ex, boost::asio::steady_timer::time_point::max()), results(n), errors(n), remaining(n) {}
    boost::asio::steady_timer timer;
    std::vector<R> results;
    std::vector<std::exception_ptr> errors;
    std::atomic<size_t> remaining;
    std::atomic<bool> done{false};
  };
  auto caller = co_await boost::asio::this_coro::executor;
  if (tasks.empty()) co_return std::vector<R>{};
  auto state = std::make_shared<State>(caller, tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) {
    boost::asio::post(tasks[i].executor, [state, i, caller, fn = std::move(tasks[i].run)]() mutable {
      try {
        state->results[i] = fn();
      } catch (...) {
        state->errors[i] = std::current_exception();
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

}  // namespace brokerd::cluster
