#pragma once
// One producer thread with its own librdkafka client: sends stamped records at its share
// of the target rate (or as fast as the client accepts them) until told to stop or until it
// has sent its share of --records, then
// waits for the delivery report of every record sent. With --transactional-id it sends
// inside transactions (TxnControl) and commits the last one at the end.

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "client.h"
#include "stats.h"
#include "txn_control.h"

namespace loadgen {

class ProducerWorker {
public:
  // `rate` is this worker's records/s; 0 = unthrottled. `limit` > 0: the worker stops on
  // its own after sending that many records.
  ProducerWorker(const Options& o, int index, double rate, uint64_t limit = 0);
  ~ProducerWorker();

  void start();
  void stop();  // stop sending; the thread then flushes what is queued
  void join();
  bool done() const { return _done.load(std::memory_order_acquire); }
  // Records sent before `steady_ns` (the warm-up) go to warmup_stats(), the rest to stats().
  void measure_from(int64_t steady_ns) {
    _measure_from_ns = steady_ns;
    if (_txn) _txn->measure_from(steady_ns);
  }
  WorkerStats& stats() { return _stats; }
  WorkerStats& warmup_stats() { return _warmup_stats; }
  TxnControl* txn() { return _txn.get(); }  // null unless transactional
  const std::string& failure() const { return _failure; }

private:
  void run();
  bool send_loop(rd_kafka_t* rk);  // false: a fatal transaction error
  bool send_one(rd_kafka_t* rk);
  static void on_delivery(rd_kafka_t* rk, const rd_kafka_message_t* msg, void* opaque);

  const Options& _o;
  int _index;
  double _rate;
  uint64_t _limit;
  KafkaHandle _rk;
  std::unique_ptr<TxnControl> _txn;
  rd_kafka_topic_t* _rkt = nullptr;
  std::string _value;
  uint64_t _rng;
  std::atomic<bool> _stop{false};
  std::atomic<bool> _done{false};
  std::thread _thread;
  int64_t _measure_from_ns = 0;
  WorkerStats _stats;
  WorkerStats _warmup_stats;
  std::string _failure;
};

}  // namespace loadgen
