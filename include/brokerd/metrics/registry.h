#pragma once
// The node's metrics. Updates are cheap and lock-free: every metric keeps one cache-line slot
// per reactor shard (written only by that shard's thread, with relaxed loads and stores) plus
// one slot shared by all other threads (relaxed read-modify-write); a scrape sums the slots.
// Families are registered at start; values are read at scrape time, on the scraper's thread.
#include <boost/asio/awaitable.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "brokerd/metrics/text_format.h"

namespace brokerd::metrics {

inline constexpr size_t kCacheLine = 64;

// The calling thread's slot: 1 + its reactor shard, or 0 for any other thread.
size_t current_slot();

class Counter {
 public:
  explicit Counter(size_t shards);
  void add(uint64_t n = 1) { add_on(current_slot(), n); }
  void add_on(size_t slot, uint64_t n) {
    auto& v = slots_[slot].v;
    if (slot == 0) v.fetch_add(n, std::memory_order_relaxed);
    else v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  uint64_t value() const;

 private:
  struct alignas(kCacheLine) Slot {
    std::atomic<uint64_t> v{0};
  };
  std::unique_ptr<Slot[]> slots_;
  size_t count_;
};

// A value that goes up and down (e.g. requests parked); each slot holds its thread's net change.
class Gauge {
 public:
  explicit Gauge(size_t shards);
  void add(int64_t n) {
    size_t slot = current_slot();
    auto& v = slots_[slot].v;
    if (slot == 0) v.fetch_add(n, std::memory_order_relaxed);
    else v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void inc() { add(1); }
  void dec() { add(-1); }
  int64_t value() const;

 private:
  struct alignas(kCacheLine) Slot {
    std::atomic<int64_t> v{0};
  };
  std::unique_ptr<Slot[]> slots_;
  size_t count_;
};

// Holds a gauge up for its lifetime (also when a coroutine frame is destroyed early).
class GaugeHold {
 public:
  explicit GaugeHold(Gauge& g) : g_(&g) { g_->inc(); }
  ~GaugeHold() { g_->dec(); }
  GaugeHold(const GaugeHold&) = delete;
  GaugeHold& operator=(const GaugeHold&) = delete;

 private:
  Gauge* g_;
};

// Fixed buckets; the sum is kept in integer units of 1e-9 (nanoseconds for seconds).
class Histogram {
 public:
  Histogram(size_t shards, std::vector<double> bounds);
  void observe(double v) { observe_nanos(static_cast<uint64_t>(v > 0 ? v * 1e9 : 0)); }
  void observe_nanos(uint64_t nanos);
  HistogramSnapshot snapshot() const;
  std::span<const double> bounds() const { return bounds_; }

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> bounds_nanos_;
  size_t stride_;  // atomics per slot: buckets + 1 (+Inf) + 1 (sum), rounded to a cache line
  size_t slots_count_;
  struct alignas(kCacheLine) Line {
    std::atomic<uint64_t> v[kCacheLine / sizeof(uint64_t)];
  };
  std::unique_ptr<Line[]> lines_;
  std::atomic<uint64_t>* cell(size_t slot) const { return &lines_[0].v[0] + slot * stride_; }
};

// Counters keyed by one label whose values are only known at run time (a topic name).
// Each slot has its own map, searched without locks by the slot's thread; a new key (first
// use on that shard) and a scrape take the slot's mutex. Keys are never removed.
class KeyedCounters {
 public:
  static constexpr size_t kMaxColumns = 5;
  struct Column {
    std::string name;
    std::string help;
  };
  // Aligned so rows of different shards never share a cache line.
  class alignas(kCacheLine) Row {
   public:
    void add(size_t column, uint64_t n) {
      auto& v = v_[column];
      if (shared_) v.fetch_add(n, std::memory_order_relaxed);
      else v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }

   private:
    friend class KeyedCounters;
    std::array<std::atomic<uint64_t>, kMaxColumns> v_{};
    bool shared_ = false;
  };

  KeyedCounters(size_t shards, std::string label, std::vector<Column> columns);
  ~KeyedCounters();
  // The calling thread's row for `key`; allocates only the first time a shard sees the key.
  Row& row(std::string_view key);
  // Sums over slots: key -> one value per column.
  std::unordered_map<std::string, std::array<uint64_t, kMaxColumns>> totals() const;
  void render(TextWriter& out) const;

 private:
  struct Slot;
  std::string label_;
  std::vector<Column> columns_;
  std::vector<std::unique_ptr<Slot>> slots_;
};

class Registry {
 public:
  // shards: the number of reactor threads.
  explicit Registry(size_t shards);
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  size_t shards() const { return shards_; }

  // Each name is one family; a family may hold several labelled series. Register at start.
  Counter& counter(std::string_view name, std::string_view help, std::vector<Label> labels = {});
  Gauge& gauge(std::string_view name, std::string_view help, std::vector<Label> labels = {});
  Histogram& histogram(std::string_view name, std::string_view help, std::vector<double> bounds,
                       std::vector<Label> labels = {});
  KeyedCounters& keyed_counters(std::string label, std::vector<KeyedCounters::Column> columns);
  // A gauge read by a callback at scrape time (on the scraper's thread).
  void gauge_fn(std::string_view name, std::string_view help, std::function<double()> read);
  // A counter kept elsewhere (monotonic), read the same way.
  void counter_fn(std::string_view name, std::string_view help, std::function<double()> read);
  // Writes whole families of its own at scrape time; may await (e.g. a fan-out to the shards).
  using Collector = std::function<boost::asio::awaitable<void>(TextWriter&)>;
  void collector(Collector c);
  // A collector that does not need to wait.
  void sync_collector(std::function<void(TextWriter&)> c);

  // The registered metrics, then every collector, in registration order.
  boost::asio::awaitable<std::string> scrape();
  // Without the awaiting collectors (tests, or a scrape that cannot reach the shards).
  std::string render_sync() const;

 private:
  struct Family;
  Family& family(std::string_view name, std::string_view help, std::string_view type);

  size_t shards_;
  mutable std::mutex mutex_;  // registration, and the registered lists at scrape
  std::vector<std::unique_ptr<Family>> families_;
  std::vector<std::unique_ptr<KeyedCounters>> keyed_;
  std::vector<std::function<void(TextWriter&)>> sync_collectors_;
  std::vector<Collector> collectors_;
};

}  // namespace brokerd::metrics
