#include "brokerd/net/reactor_pool.h"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <pthread.h>
#include <signal.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "brokerd/common/logger.h"

namespace brokerd::net {

namespace {
thread_local int tls_shard = -1;
}

int current_shard() { return tls_shard; }

struct ReactorPool::Impl {
  using Guard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  std::vector<std::unique_ptr<boost::asio::io_context>> contexts;
  std::vector<std::optional<Guard>> guards;
  std::vector<std::thread> threads;
  std::mutex mu;
  std::condition_variable cv;
  size_t running = 0;
  std::string name;
  bool shards = true;
};

ReactorPool::ReactorPool(size_t threads, std::string name, bool shards) : impl_(std::make_unique<Impl>()) {
  impl_->name = std::move(name);
  impl_->shards = shards;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (size_t i = 0; i < threads; ++i) {
    // Concurrency hint 1: each context is only ever run by its own thread.
    impl_->contexts.push_back(std::make_unique<boost::asio::io_context>(1));
    impl_->guards.emplace_back(impl_->contexts.back()->get_executor());
  }
}

ReactorPool::~ReactorPool() {
  stop();
  join();
}

size_t ReactorPool::size() const { return impl_->contexts.size(); }

boost::asio::any_io_executor ReactorPool::executor(size_t shard) const {
  return impl_->contexts.at(shard)->get_executor();
}

void ReactorPool::start() {
  if (!impl_->threads.empty()) throw std::logic_error("ReactorPool already started");
  impl_->running = impl_->contexts.size();
  for (size_t i = 0; i < impl_->contexts.size(); ++i) {
    impl_->threads.emplace_back([this, i] {
      if (impl_->shards) tls_shard = static_cast<int>(i);
      // "reactor-N" in top -H, perf and /proc/PID/task/*/comm.
      const std::string name = impl_->name + "-" + std::to_string(i);
      pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
      // sendfile() to a peer that has gone raises SIGPIPE (it has no MSG_NOSIGNAL); blocked
      // here, the call fails with EPIPE instead and the process lives on.
      sigset_t pipe;
      sigemptyset(&pipe);
      sigaddset(&pipe, SIGPIPE);
      pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
      auto& ctx = *impl_->contexts[i];
      for (;;) {
        try {
          ctx.run();
          break;
        } catch (const std::exception& e) {
          // A handler let an exception escape: keep the shard alive, it serves others too.
          module_logger("net")->error("{}-{}: unhandled exception: {}", impl_->name, i, e.what());
        }
      }
      tls_shard = -1;
      std::lock_guard lock(impl_->mu);
      --impl_->running;
      impl_->cv.notify_all();
    });
  }
}

bool ReactorPool::drain(std::chrono::milliseconds timeout) {
  for (auto& g : impl_->guards) g.reset();
  std::unique_lock lock(impl_->mu);
  return impl_->cv.wait_for(lock, timeout, [&] { return impl_->running == 0; });
}

void ReactorPool::stop() {
  for (auto& g : impl_->guards) g.reset();
  for (auto& c : impl_->contexts) c->stop();
}

void ReactorPool::join() {
  for (auto& t : impl_->threads) {
    if (t.joinable()) t.join();
  }
}

}  // namespace brokerd::net
