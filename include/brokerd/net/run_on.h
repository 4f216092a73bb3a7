#pragma once
// run_on: run a callable on another executor (shard, blocking pool) and resume the calling
// coroutine on its own executor with the result. Exceptions propagate to the caller.
//
// GCC 12 destroys twice an aggregate temporary (a capturing lambda, `T{...}`) created inside a
// co_await expression. Name such a callable before awaiting:
//   auto read = [file] { ... };
//   co_await run_on(ex, std::move(read));      // not: co_await run_on(ex, [file] { ... });
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <concepts>
#include <optional>
#include <type_traits>
#include <utility>

#include "brokerd/net/reactor_pool.h"
#include "brokerd/net/request_time.h"

namespace brokerd::net {

namespace detail {

template <typename T>
struct awaitable_value {
  using type = T;
  static constexpr bool is_awaitable = false;
};
template <typename T, typename E>
struct awaitable_value<boost::asio::awaitable<T, E>> {
  using type = T;
  static constexpr bool is_awaitable = true;
};

template <typename F>
using invoke_t = std::invoke_result_t<F&>;

// The value the callable produces, whether it returns it directly or as an awaitable.
template <typename F>
using run_result_t = typename awaitable_value<invoke_t<F>>::type;

}  // namespace detail

namespace detail {

// The callable as a coroutine: a function taking f by value rather than a capturing coroutine
// lambda, whose captures would die with the lambda object.
template <typename F, typename R = run_result_t<F>>
boost::asio::awaitable<R> invoke_as_awaitable(F f) {
  constexpr bool returns_awaitable = awaitable_value<invoke_t<F>>::is_awaitable;
  if constexpr (std::is_void_v<R>) {
    if constexpr (returns_awaitable) {
      co_await f();
    } else {
      f();
    }
  } else if constexpr (returns_awaitable) {
    co_return co_await f();
  } else {
    co_return f();
  }
}

template <typename F, typename R = run_result_t<F>>
boost::asio::awaitable<std::optional<R>> invoke_as_optional(F f) {
  co_return std::optional<R>(co_await invoke_as_awaitable(std::move(f)));
}

}  // namespace detail

// Runs f (plain, or returning an awaitable) on `target`; the caller resumes on its own executor.
// Time f spends there is charged to the caller's request, if its time is counted
// (net/request_time.h).
template <typename F>
boost::asio::awaitable<detail::run_result_t<F>> run_on(boost::asio::any_io_executor target, F f) {
  using R = detail::run_result_t<F>;
  if constexpr (std::is_void_v<R> || std::default_initializable<R>) {
    // The coroutine is only created here; co_spawn starts it on `target`.
    co_return co_await boost::asio::co_spawn(charging_current(std::move(target)), detail::invoke_as_awaitable(std::move(f)),
                                             boost::asio::use_awaitable);
  } else {
    // co_spawn needs a default-constructible result to report an exception.
    auto out = co_await boost::asio::co_spawn(charging_current(std::move(target)), detail::invoke_as_optional(std::move(f)),
                                              boost::asio::use_awaitable);
    co_return std::move(*out);
  }
}

template <typename F>
boost::asio::awaitable<detail::run_result_t<F>> run_on(const ReactorPool& pool, size_t shard, F f) {
  return run_on(pool.executor(shard), std::move(f));
}

}  // namespace brokerd::net
