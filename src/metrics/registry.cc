#include "brokerd/metrics/registry.h"

#include <algorithm>
#include <stdexcept>

#include "brokerd/net/reactor_pool.h"

namespace brokerd::metrics {

size_t current_slot() {
  int shard = net::current_shard();
  return shard < 0 ? 0 : static_cast<size_t>(shard) + 1;
}

Counter::Counter(size_t shards) : slots_(new Slot[shards + 1]), count_(shards + 1) {}

uint64_t Counter::value() const {
  uint64_t sum = 0;
  for (size_t i = 0; i < count_; ++i) sum += slots_[i].v.load(std::memory_order_relaxed);
  return sum;
}

Gauge::Gauge(size_t shards) : slots_(new Slot[shards + 1]), count_(shards + 1) {}

int64_t Gauge::value() const {
  int64_t sum = 0;
  for (size_t i = 0; i < count_; ++i) sum += slots_[i].v.load(std::memory_order_relaxed);
  return sum;
}

Histogram::Histogram(size_t shards, std::vector<double> bounds) : bounds_(std::move(bounds)) {
  if (!std::is_sorted(bounds_.begin(), bounds_.end()) ||
      std::adjacent_find(bounds_.begin(), bounds_.end()) != bounds_.end())
    throw std::invalid_argument("histogram bounds must increase");
  for (double b : bounds_) bounds_nanos_.push_back(static_cast<uint64_t>(b * 1e9));
  constexpr size_t per_line = kCacheLine / sizeof(std::atomic<uint64_t>);
  stride_ = (bounds_.size() + 2 + per_line - 1) / per_line * per_line;
  slots_count_ = shards + 1;
  const size_t lines = stride_ / per_line * slots_count_;
  lines_.reset(new Line[lines]);
  for (size_t i = 0; i < lines; ++i)
    for (auto& v : lines_[i].v) v.store(0, std::memory_order_relaxed);
}

void Histogram::observe_nanos(uint64_t nanos) {
  size_t slot = current_slot();
  std::atomic<uint64_t>* cells = cell(slot);
  size_t bucket = 0;
  while (bucket < bounds_nanos_.size() && nanos > bounds_nanos_[bucket]) ++bucket;
  auto bump = [slot](std::atomic<uint64_t>& v, uint64_t n) {
    if (slot == 0) v.fetch_add(n, std::memory_order_relaxed);
    else v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  };
  bump(cells[bucket], 1);
  bump(cells[bounds_.size() + 1], nanos);
}

HistogramSnapshot Histogram::snapshot() const {
  HistogramSnapshot s;
  s.bounds = bounds_;
  s.counts.assign(bounds_.size() + 1, 0);
  uint64_t sum_nanos = 0;
  for (size_t slot = 0; slot < slots_count_; ++slot) {
    const std::atomic<uint64_t>* cells = cell(slot);
    for (size_t b = 0; b <= bounds_.size(); ++b) s.counts[b] += cells[b].load(std::memory_order_relaxed);
    sum_nanos += cells[bounds_.size() + 1].load(std::memory_order_relaxed);
  }
  s.sum = static_cast<double>(sum_nanos) / 1e9;
  return s;
}

// ---- KeyedCounters

namespace {
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
}  // namespace

struct KeyedCounters::Slot {
  std::mutex mutex;  // held by the owner while inserting, and by a scrape while reading
  std::unordered_map<std::string, Row, StringHash, std::equal_to<>> rows;
};

KeyedCounters::KeyedCounters(size_t shards, std::string label, std::vector<Column> columns)
    : label_(std::move(label)), columns_(std::move(columns)) {
  if (columns_.size() > kMaxColumns) throw std::invalid_argument("too many keyed counter columns");
  for (size_t i = 0; i <= shards; ++i) slots_.push_back(std::make_unique<Slot>());
}

KeyedCounters::~KeyedCounters() = default;

KeyedCounters::Row& KeyedCounters::row(std::string_view key) {
  size_t slot = current_slot();
  Slot& s = *slots_[slot];
  if (slot != 0) {
    // Only this thread inserts into its slot's map, so finding without the lock is safe.
    auto it = s.rows.find(key);
    if (it != s.rows.end()) return it->second;
  }
  std::lock_guard lock(s.mutex);
  auto [it, inserted] = s.rows.try_emplace(std::string(key));
  if (inserted) it->second.shared_ = slot == 0;
  return it->second;
}

std::unordered_map<std::string, std::array<uint64_t, KeyedCounters::kMaxColumns>> KeyedCounters::totals() const {
  std::unordered_map<std::string, std::array<uint64_t, kMaxColumns>> out;
  for (const auto& s : slots_) {
    std::lock_guard lock(s->mutex);
    for (const auto& [key, row] : s->rows) {
      auto& t = out[key];
      for (size_t c = 0; c < columns_.size(); ++c) t[c] += row.v_[c].load(std::memory_order_relaxed);
    }
  }
  return out;
}

void KeyedCounters::render(TextWriter& out) const {
  auto totals = this->totals();
  std::vector<const std::string*> keys;
  for (const auto& kv : totals) keys.push_back(&kv.first);
  std::sort(keys.begin(), keys.end(), [](auto* a, auto* b) { return *a < *b; });
  for (size_t c = 0; c < columns_.size(); ++c) {
    out.family(columns_[c].name, columns_[c].help, "counter");
    for (const std::string* k : keys) {
      Label l{label_, *k};
      out.sample(columns_[c].name, std::span<const Label>(&l, 1), static_cast<double>(totals[*k][c]));
    }
  }
}

// ---- Registry

struct Registry::Family {
  std::string name;
  std::string help;
  std::string type;
  struct Series {
    std::vector<std::pair<std::string, std::string>> labels;
    std::unique_ptr<Counter> counter;
    std::unique_ptr<Gauge> gauge;
    std::unique_ptr<Histogram> histogram;
    std::function<double()> read;
  };
  std::vector<Series> series;

  Series& add(const std::vector<Label>& labels) {
    Series s;
    for (const auto& l : labels) s.labels.emplace_back(l.name, l.value);
    series.push_back(std::move(s));
    return series.back();
  }
};

Registry::Registry(size_t shards) : shards_(shards) {}
Registry::~Registry() = default;

Registry::Family& Registry::family(std::string_view name, std::string_view help, std::string_view type) {
  for (auto& f : families_) {
    if (f->name == name) {
      if (f->type != type) throw std::invalid_argument("metric " + std::string(name) + " registered with two types");
      return *f;
    }
  }
  families_.push_back(std::make_unique<Family>(Family{std::string(name), std::string(help), std::string(type), {}}));
  return *families_.back();
}

Counter& Registry::counter(std::string_view name, std::string_view help, std::vector<Label> labels) {
  std::lock_guard lock(mutex_);
  auto& s = family(name, help, "counter").add(labels);
  s.counter = std::make_unique<Counter>(shards_);
  return *s.counter;
}

Gauge& Registry::gauge(std::string_view name, std::string_view help, std::vector<Label> labels) {
  std::lock_guard lock(mutex_);
  auto& s = family(name, help, "gauge").add(labels);
  s.gauge = std::make_unique<Gauge>(shards_);
  return *s.gauge;
}

Histogram& Registry::histogram(std::string_view name, std::string_view help, std::vector<double> bounds,
                               std::vector<Label> labels) {
  std::lock_guard lock(mutex_);
  auto& s = family(name, help, "histogram").add(labels);
  s.histogram = std::make_unique<Histogram>(shards_, std::move(bounds));
  return *s.histogram;
}

KeyedCounters& Registry::keyed_counters(std::string label, std::vector<KeyedCounters::Column> columns) {
  std::lock_guard lock(mutex_);
  keyed_.push_back(std::make_unique<KeyedCounters>(shards_, std::move(label), std::move(columns)));
  return *keyed_.back();
}

void Registry::gauge_fn(std::string_view name, std::string_view help, std::function<double()> read) {
  std::lock_guard lock(mutex_);
  family(name, help, "gauge").add({}).read = std::move(read);
}

void Registry::counter_fn(std::string_view name, std::string_view help, std::function<double()> read) {
  std::lock_guard lock(mutex_);
  family(name, help, "counter").add({}).read = std::move(read);
}

void Registry::collector(Collector c) {
  std::lock_guard lock(mutex_);
  collectors_.push_back(std::move(c));
}

void Registry::sync_collector(std::function<void(TextWriter&)> c) {
  std::lock_guard lock(mutex_);
  sync_collectors_.push_back(std::move(c));
}

std::string Registry::render_sync() const {
  TextWriter out;
  std::lock_guard lock(mutex_);
  for (const auto& f : families_) {
    out.family(f->name, f->help, f->type);
    for (const auto& s : f->series) {
      std::vector<Label> labels;
      for (const auto& [k, v] : s.labels) labels.push_back({k, v});
      if (s.counter) out.sample(f->name, labels, static_cast<double>(s.counter->value()));
      else if (s.gauge) out.sample(f->name, labels, static_cast<double>(s.gauge->value()));
      else if (s.histogram) out.histogram(f->name, labels, s.histogram->snapshot());
      else if (s.read) out.sample(f->name, labels, s.read());
    }
  }
  for (const auto& k : keyed_) k->render(out);
  for (const auto& c : sync_collectors_) c(out);
  return out.take();
}

boost::asio::awaitable<std::string> Registry::scrape() {
  std::string text = render_sync();
  std::vector<Collector> collectors;
  {
    std::lock_guard lock(mutex_);
    collectors = collectors_;
  }
  for (auto& c : collectors) {
    TextWriter out;
    co_await c(out);
    text += out.text();
  }
  co_return text;
}

}  // namespace brokerd::metrics
