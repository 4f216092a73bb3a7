// brokerd-load: drives a Kafka-compatible broker with librdkafka producers and consumers
// and reports throughput and latency percentiles. main only wires the parts together.

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <memory>
#include <stdexcept>
#include <thread>

#include "client.h"
#include "consumer_worker.h"
#include "options.h"
#include "producer_worker.h"
#include "report.h"
#include "stamp.h"

namespace {

using namespace loadgen;
using clock_type = std::chrono::steady_clock;

std::atomic<bool> interrupted{false};
extern "C" void on_signal(int) { interrupted.store(true); }

constexpr int exit_setup = 1;
constexpr int exit_no_groups = 3;
constexpr double group_join_timeout_s = 30;

double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

// Each consumer gets every M-th partition.
void assign_partitions(const Options& o, int partitions, std::vector<std::unique_ptr<ConsumerWorker>>& consumers) {
  KafkaHandle probe = make_client(make_conf(o, ClientKind::admin, "brokerd-load-offsets"), RD_KAFKA_PRODUCER);
  std::vector<int64_t> ends;
  if (!o.from_beginning) ends = end_offsets(probe.get(), o.topic, partitions);
  for (size_t c = 0; c < consumers.size(); ++c) {
    std::vector<int> mine;
    std::vector<int64_t> offsets;
    for (int p = int(c); p < partitions; p += int(consumers.size())) {
      mine.push_back(p);
      offsets.push_back(o.from_beginning ? RD_KAFKA_OFFSET_BEGINNING : ends[size_t(p)]);
    }
    consumers[c]->assign(mine, offsets);
  }
}

int run(Options& o) {
  RunResult result;
  std::unique_ptr<MockCluster> mock;
  if (o.mock_brokers > 0) {
    mock = std::make_unique<MockCluster>(o.mock_brokers);
    o.bootstrap = mock->bootstrap();
    mock->create_topic(o.topic, o.partitions, std::min(o.replication_factor, o.mock_brokers));
  }
  result.partitions = ensure_topic(o);
  if (result.partitions != o.partitions)
    fmt::print(stderr, "note: topic {} exists with {} partitions (asked for {})\n", o.topic, result.partitions,
               o.partitions);

  StartOffsets group_starts;  // outlives the consumers, declared after it
  std::vector<std::unique_ptr<ConsumerWorker>> consumers;
  if (o.consuming()) {
    if (!o.group.empty()) {
      GroupSupport g = probe_groups(o, o.group);
      result.group_served = g.served;
      result.group_detail = g.detail;
      if (!g.served) {
        fmt::print(stderr, "consumer groups are not served by {}: {}\n", o.bootstrap, g.detail);
        o.json ? print_json(o, result) : print_text(o, result);
        return exit_no_groups;
      }
    }
    for (int i = 0; i < o.consumers; ++i) consumers.push_back(std::make_unique<ConsumerWorker>(o, i));
    if (o.group.empty()) {
      assign_partitions(o, result.partitions, consumers);
    } else {
      if (!o.from_beginning) {
        KafkaHandle probe = make_client(make_conf(o, ClientKind::admin, "brokerd-load-offsets"), RD_KAFKA_PRODUCER);
        group_starts.set(end_offsets(probe.get(), o.topic, result.partitions));
      }
      for (auto& c : consumers) c->subscribe(&group_starts);
    }
    for (auto& c : consumers) c->start();
    if (!o.group.empty()) {
      // Produce only once the group has handed out every partition, so nothing sent is
      // skipped by a consumer that starts at the end of the log.
      auto t = clock_type::now();
      for (;;) {
        int assigned = 0;
        for (auto& c : consumers) assigned += c->assigned();
        if (assigned >= result.partitions) break;
        if (since(t) > group_join_timeout_s || interrupted) {
          result.group_served = false;
          result.group_detail = fmt::format("{} of {} partitions assigned after {:.0f} s", assigned,
                                            result.partitions, since(t));
          fmt::print(stderr, "group {} did not form: {}\n", o.group, result.group_detail);
          o.json ? print_json(o, result) : print_text(o, result);
          return exit_no_groups;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  }

  std::vector<std::unique_ptr<ProducerWorker>> producers;
  if (o.producing())
    for (int i = 0; i < o.producers; ++i) {
      // --records split over the producers, the first ones taking the remainder.
      uint64_t limit = o.records > 0 ? uint64_t(o.records / o.producers + (i < o.records % o.producers ? 1 : 0)) : 0;
      producers.push_back(std::make_unique<ProducerWorker>(o, i, o.rate / o.producers, limit));
    }

  // The final figures leave out the warm-up: records sent in it (producers) and records
  // received in it (consumers), each by its own clock, so records written before the run
  // count when consumers replay them.
  const auto start = clock_type::now();
  const auto warmup = std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(o.warmup_s));
  const int64_t start_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count();
  const int64_t measure_from_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>((start + warmup).time_since_epoch()).count();
  const int64_t start_wall_us = wall_clock_us();
  for (auto& p : producers) p->measure_from(measure_from_ns);
  for (auto& c : consumers) c->measure_from(measure_from_ns, start_wall_us);
  for (auto& p : producers) p->start();

  // Once a second: take each worker's interval, print it, and add what was sent after the
  // warm-up to the totals. Producing stops at the duration, or once the producers have sent
  // --records; consumers then get up to --drain seconds to receive what was acknowledged.
  uint64_t produced_all = 0;  // including the warm-up, to know when consumers caught up
  uint64_t consumed_all = 0;
  double last_tick = 0;
  double produce_end = -1, consume_end = -1, drain_start = -1;
  bool stopping = false;
  auto collect = [&](double now) {
    Interval p, c, p_warm, c_warm;
    TxnInterval t, t_warm;
    for (auto& w : producers) w->stats().take(p), w->warmup_stats().take(p_warm);
    for (auto& w : producers)
      if (w->txn()) w->txn()->stats().take(t), w->txn()->warmup_stats().take(t_warm);
    for (auto& w : consumers) w->stats().take(c), w->warmup_stats().take(c_warm);
    result.produce.merge(p);
    result.consume.merge(c);
    result.txn.merge(t);
    p.merge(p_warm);
    t.merge(t_warm);
    c.merge(c_warm);
    produced_all += p.records;
    consumed_all += c.records;
    if (o.progress && now - last_tick > 0.05) print_progress(now, now - last_tick, o, p, c, t);
    last_tick = now;
  };
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    double now = since(start);
    bool producers_done = true;
    for (auto& p : producers) producers_done = producers_done && p->done();
    if (!stopping && (now >= o.duration_s || interrupted || (o.records > 0 && !producers.empty() && producers_done))) {
      stopping = true;
      for (auto& p : producers) p->stop();
    }
    bool finishing = stopping && producers_done;
    if (now - last_tick >= 1.0 || finishing) collect(now);
    if (!finishing) continue;
    if (produce_end < 0) produce_end = now;
    if (consumers.empty() || producers.empty()) {
      consume_end = now;
      break;
    }
    if (drain_start < 0) drain_start = now;
    if (consumed_all >= produced_all || now - drain_start >= o.drain_s || interrupted) {
      consume_end = now;
      break;
    }
  }
  for (auto& c : consumers) c->stop();
  for (auto& c : consumers) c->join();
  for (auto& p : producers) p->join();

  result.produce_seconds = produce_end - o.warmup_s;
  result.consume_seconds = consume_end - o.warmup_s;
  if (producers.empty()) {
    // Consuming alone (a replay): the rate is over the time records kept arriving, not the
    // idle rest of --duration after the consumers caught up.
    int64_t last_ns = 0;
    for (auto& c : consumers) last_ns = std::max(last_ns, c->last_counted_ns());
    if (last_ns > measure_from_ns) result.consume_seconds = double(last_ns - start_ns) / 1e9 - o.warmup_s;
  }
  for (auto& p : producers)
    if (!p->failure().empty()) result.failures.push_back("producer: " + p->failure());
  for (auto& p : producers)
    if (p->txn() && !p->txn()->abort_reason().empty()) result.abort_reasons.push_back(p->txn()->abort_reason());
  for (auto& c : consumers)
    if (!c->failure().empty()) result.failures.push_back("consumer: " + c->failure());
  o.json ? print_json(o, result) : print_text(o, result);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    if (!parse_options(argc, argv, o)) return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "brokerd-load: {}\n", e.what());
    return exit_setup;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  try {
    return run(o);
  } catch (const std::exception& e) {
    fmt::print(stderr, "brokerd-load: {}\n", e.what());
    return exit_setup;
  }
}
