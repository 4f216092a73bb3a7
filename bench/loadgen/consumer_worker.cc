#include "consumer_worker.h"

#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "stamp.h"

namespace loadgen {

void StartOffsets::set(const std::vector<int64_t>& offsets) {
  std::lock_guard lock(_mutex);
  for (size_t p = 0; p < offsets.size(); ++p) _pending[int(p)] = offsets[p];
}

int64_t StartOffsets::claim(int partition) {
  std::lock_guard lock(_mutex);
  auto it = _pending.find(partition);
  if (it == _pending.end()) return RD_KAFKA_OFFSET_INVALID;
  int64_t offset = it->second;
  _pending.erase(it);
  return offset;
}

ConsumerWorker::ConsumerWorker(const Options& o, int index)
    : _o(o), _measure_from_ns(o.warmup_s > 0 ? std::numeric_limits<int64_t>::max() : 0) {
  rd_kafka_conf_t* conf = make_conf(o, ClientKind::consumer, fmt::format("brokerd-load-c{}", index));
  rd_kafka_conf_set_opaque(conf, this);
  if (!o.group.empty()) rd_kafka_conf_set_rebalance_cb(conf, &ConsumerWorker::on_rebalance);
  _rk = make_client(conf, RD_KAFKA_CONSUMER);
  rd_kafka_poll_set_consumer(_rk.get());
}

ConsumerWorker::~ConsumerWorker() {
  stop();
  join();
  if (_rk) rd_kafka_consumer_close(_rk.get());
}

void ConsumerWorker::assign(const std::vector<int>& partitions, const std::vector<int64_t>& offsets) {
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(int(partitions.size()));
  for (size_t i = 0; i < partitions.size(); ++i)
    rd_kafka_topic_partition_list_add(list, _o.topic.c_str(), partitions[i])->offset = offsets[i];
  rd_kafka_resp_err_t err = rd_kafka_assign(_rk.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error(fmt::format("assign: {}", rd_kafka_err2str(err)));
  _assigned.store(int(partitions.size()));
}

void ConsumerWorker::on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts,
                                  void* opaque) {
  auto* self = static_cast<ConsumerWorker*>(opaque);
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    for (int i = 0; i < parts->cnt; ++i)
      if (self->_starts != nullptr) parts->elems[i].offset = self->_starts->claim(parts->elems[i].partition);
    rd_kafka_assign(rk, parts);
  } else {
    rd_kafka_assign(rk, nullptr);
  }
}

void ConsumerWorker::subscribe(StartOffsets* starts) {
  _group = true;
  _starts = starts;
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(list, _o.topic.c_str(), RD_KAFKA_PARTITION_UA);
  rd_kafka_resp_err_t err = rd_kafka_subscribe(_rk.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error(fmt::format("subscribe: {}", rd_kafka_err2str(err)));
}

void ConsumerWorker::start() { _thread = std::thread([this] { run(); }); }
void ConsumerWorker::stop() { _stop.store(true, std::memory_order_relaxed); }
void ConsumerWorker::join() {
  if (_thread.joinable()) _thread.join();
}

void ConsumerWorker::run() {
  rd_kafka_t* rk = _rk.get();
  while (!_stop.load(std::memory_order_relaxed)) {
    rd_kafka_message_t* msg = rd_kafka_consumer_poll(rk, 100);
    if (_group) {
      // librdkafka applies the group's assignment itself; we only watch its size.
      rd_kafka_topic_partition_list_t* now = nullptr;
      if (rd_kafka_assignment(rk, &now) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        _assigned.store(now->cnt, std::memory_order_relaxed);
        rd_kafka_topic_partition_list_destroy(now);
      }
    }
    if (msg == nullptr) continue;
    if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      // Consumer errors are mostly transient (librdkafka retries); count and remember them.
      _stats.error();
      if (_failure.empty()) _failure = rd_kafka_message_errstr(msg);
    } else {
      int64_t latency_us = -1;
      auto sent_us = read_stamp(msg->payload, msg->len);
      if (sent_us && *sent_us >= _run_start_us.load(std::memory_order_relaxed)) {
        // A clock step backwards must not turn into a huge unsigned latency.
        latency_us = std::max<int64_t>(0, wall_clock_us() - *sent_us);
      }
      int64_t now_ns = steady_ns();
      bool warmup = now_ns < _measure_from_ns.load(std::memory_order_relaxed);
      (warmup ? _warmup_stats : _stats).record(msg->len + msg->key_len, latency_us);
      if (!warmup) _last_counted_ns.store(now_ns, std::memory_order_relaxed);
      _consumed.fetch_add(1, std::memory_order_relaxed);
    }
    rd_kafka_message_destroy(msg);
  }
}

}  // namespace loadgen
