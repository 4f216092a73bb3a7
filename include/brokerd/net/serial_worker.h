#pragma once
// One thread that runs jobs in the order they were posted, for calls that may block for a
// long time and must not occupy the blocking pool (a leader's ISR changes, which wait for
// the controller). stop() drops the jobs that have not started and joins.
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace brokerd::net {

class SerialWorker {
 public:
  explicit SerialWorker(std::string name);
  ~SerialWorker();  // stop()
  SerialWorker(const SerialWorker&) = delete;
  SerialWorker& operator=(const SerialWorker&) = delete;

  // Queues f; after stop() it is dropped. An exception escaping f is logged.
  void post(std::function<void()> f);
  // Waits for the job in progress, drops the rest, joins. Idempotent.
  void stop();

 private:
  void run();

  std::string name_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace brokerd::net
