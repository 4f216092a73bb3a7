#pragma once
// A fixed set of reactor threads, one io_context each. Work that belongs to a partition runs
// on that partition's home shard, so the data path needs no locks.
#include <boost/asio/any_io_executor.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

namespace brokerd::net {

// The shard index of the calling thread, or -1 when it is not a reactor thread.
int current_shard();

class ReactorPool {
 public:
  // threads == 0 means one per hardware core. The threads are named `name`-N; only the
  // threads of a pool of `shards` are shards (current_shard() is their index), so a pool kept
  // apart for one job (the controller listener) never passes for a data-path shard.
  explicit ReactorPool(size_t threads = 0, std::string name = "reactor", bool shards = true);
  ~ReactorPool();  // stops and joins
  ReactorPool(const ReactorPool&) = delete;
  ReactorPool& operator=(const ReactorPool&) = delete;

  size_t size() const;
  boost::asio::any_io_executor executor(size_t shard) const;

  // Starts the threads; each runs its io_context until stop(), even when it has no work.
  void start();
  // Lets every io_context run until it has no work left (no pending handler, timer or
  // suspended coroutine), at most `timeout`. True when all threads have exited by then; the
  // caller must first end everything that waits indefinitely (listeners, parked waits,
  // periodic loops). Must not be called from a reactor thread.
  bool drain(std::chrono::milliseconds timeout);
  // Asks every io_context to stop; pending handlers are dropped (and destroyed only with the
  // pool). Safe from any thread.
  void stop();
  // Waits for the threads to exit. Must not be called from a reactor thread.
  void join();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace brokerd::net
