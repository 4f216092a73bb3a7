#pragma once
// Figures one worker thread records, and what the reporter takes from it each second.
// The worker holds the lock only to record one value; the reporter swaps the interval out.

#include <cstdint>
#include <mutex>

#include "histogram.h"

namespace loadgen {

struct Interval {
  uint64_t records = 0;
  uint64_t bytes = 0;
  uint64_t errors = 0;
  Histogram latency_us;  // produce: send -> delivery report; consume: stamp -> receipt

  void merge(const Interval& o) {
    records += o.records;
    bytes += o.bytes;
    errors += o.errors;
    latency_us.merge(o.latency_us);
  }
};

class WorkerStats {
public:
  void record(uint64_t bytes, int64_t latency_us) {
    std::lock_guard lock(_mutex);
    ++_current.records;
    _current.bytes += bytes;
    if (latency_us >= 0) _current.latency_us.record(uint64_t(latency_us));
  }
  void error() {
    std::lock_guard lock(_mutex);
    ++_current.errors;
  }
  // Adds what was recorded since the last call to `into` and starts a new interval.
  void take(Interval& into) {
    std::lock_guard lock(_mutex);
    into.merge(_current);
    _current.records = _current.bytes = _current.errors = 0;
    _current.latency_us.reset();
  }

private:
  std::mutex _mutex;
  Interval _current;
};

// A transactional producer's transactions: commits and the time of each commit call,
// aborted transactions.
struct TxnInterval {
  uint64_t commits = 0;
  uint64_t aborts = 0;
  Histogram commit_us;  // rd_kafka_commit_transaction: call -> return

  void merge(const TxnInterval& o) {
    commits += o.commits;
    aborts += o.aborts;
    commit_us.merge(o.commit_us);
  }
};

class TxnStats {
public:
  void commit(int64_t latency_us) {
    std::lock_guard lock(_mutex);
    ++_current.commits;
    if (latency_us >= 0) _current.commit_us.record(uint64_t(latency_us));
  }
  void abort() {
    std::lock_guard lock(_mutex);
    ++_current.aborts;
  }
  void take(TxnInterval& into) {
    std::lock_guard lock(_mutex);
    into.merge(_current);
    _current.commits = _current.aborts = 0;
    _current.commit_us.reset();
  }

private:
  std::mutex _mutex;
  TxnInterval _current;
};

}  // namespace loadgen
