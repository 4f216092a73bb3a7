#pragma once
// One consumer thread with its own librdkafka client: either assigned a fixed set of
// partitions from given offsets, or a member of a consumer group. Records carrying this
// tool's stamp give end-to-end latency; others are counted only.

#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client.h"
#include "stats.h"

namespace loadgen {

// Where group members start: the end offsets seen before producing began, handed out once
// per partition. A partition that moves later resumes from its committed offset, so a
// group consumer, like an assigned one, misses nothing produced during the run.
class StartOffsets {
public:
  void set(const std::vector<int64_t>& offsets);
  int64_t claim(int partition);  // RD_KAFKA_OFFSET_INVALID once claimed

private:
  std::mutex _mutex;
  std::map<int, int64_t> _pending;
};

class ConsumerWorker {
public:
  ConsumerWorker(const Options& o, int index);
  ~ConsumerWorker();

  // Assignment mode: read these partitions starting at these offsets.
  void assign(const std::vector<int>& partitions, const std::vector<int64_t>& offsets);
  // Group mode: subscribe to the topic as a member of o.group, starting each partition at
  // the offset `starts` hands out.
  void subscribe(StartOffsets* starts);
  void start();
  void stop();
  void join();

  // Partitions this consumer currently reads (in group mode: once the group assigned them).
  int assigned() const { return _assigned.load(std::memory_order_relaxed); }
  uint64_t consumed() const { return _consumed.load(std::memory_order_relaxed); }
  // Warm-up is by this consumer's clock: records received before `from_ns` (steady_ns())
  // go to warmup_stats(), the rest to stats(), whenever they were written, so a replay of
  // an old log counts. End-to-end latency is taken only from records stamped at or after
  // `run_start_wall_us`: an older record's age says nothing about the broker. Until this
  // is called (a group consumer runs while its group forms), records are warm-up if the
  // run has one and carry no latency.
  void measure_from(int64_t from_ns, int64_t run_start_wall_us) {
    _measure_from_ns.store(from_ns, std::memory_order_relaxed);
    _run_start_us.store(run_start_wall_us, std::memory_order_relaxed);
  }
  // steady_ns() when the last record after the warm-up arrived; 0 if none did.
  int64_t last_counted_ns() const { return _last_counted_ns.load(std::memory_order_relaxed); }
  WorkerStats& stats() { return _stats; }
  WorkerStats& warmup_stats() { return _warmup_stats; }
  const std::string& failure() const { return _failure; }

private:
  void run();
  static void on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts,
                           void* opaque);

  const Options& _o;
  KafkaHandle _rk;
  bool _group = false;
  StartOffsets* _starts = nullptr;
  std::atomic<int> _assigned{0};
  std::atomic<uint64_t> _consumed{0};
  std::atomic<bool> _stop{false};
  std::thread _thread;
  std::atomic<int64_t> _measure_from_ns;
  std::atomic<int64_t> _run_start_us{std::numeric_limits<int64_t>::max()};
  std::atomic<int64_t> _last_counted_ns{0};
  WorkerStats _stats;
  WorkerStats _warmup_stats;
  std::string _failure;
};

}  // namespace loadgen
