#pragma once
// A small fixed pool of plain threads for calls that may block on disk (cold reads, fsync),
// so that reactor threads never do.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>

#include <cstddef>
#include <exception>
#include <memory>

#include "brokerd/net/run_on.h"

namespace brokerd::net {

class BlockingPool {
 public:
  explicit BlockingPool(size_t threads = 4);
  ~BlockingPool();  // waits for queued work, then joins
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;

  size_t size() const { return threads_; }
  boost::asio::any_io_executor executor() const;

  // Runs f on a pool thread; the calling coroutine resumes on its own executor with the
  // result (or the exception f threw).
  template <typename F>
  boost::asio::awaitable<detail::run_result_t<F>> run(F f) {
    return run_on(executor(), std::move(f));
  }

  // Fire and forget; an exception escaping f is logged and swallowed.
  template <typename F>
  void post(F f) {
    boost::asio::post(executor(), [f = std::move(f)]() mutable {
      try {
        f();
      } catch (...) {
        log_post_failure(std::current_exception());
      }
    });
  }

  // Stops taking work and joins the threads once queued work is done.
  void join();

 private:
  static void log_post_failure(std::exception_ptr e);

  struct Impl;
  size_t threads_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace brokerd::net
