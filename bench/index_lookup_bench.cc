// Offset and time index lookups in indexes of 100k entries (a ~400 MB segment at the
// default index.interval.bytes).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>

#include "brokerd/storage/offset_index.h"
#include "brokerd/storage/time_index.h"

namespace {

using namespace brokerd::storage;
constexpr int kEntries = 100'000;

std::filesystem::path bench_dir() {
  auto d = std::filesystem::temp_directory_path() / ("brokerd-index-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}

void BM_OffsetIndexLookup(benchmark::State& state) {
  auto dir = bench_dir();
  {
    OffsetIndex idx(dir / "o.index", 0, kEntries * OffsetIndex::kEntrySize, true);
    for (int i = 0; i < kEntries; ++i) idx.append(int64_t{i} * 10 + 9, static_cast<uint32_t>(i) * 4096);
    std::mt19937_64 rng(1);
    for (auto _ : state) benchmark::DoNotOptimize(idx.lookup(static_cast<int64_t>(rng() % (kEntries * 10))));
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_OffsetIndexLookup);

void BM_TimeIndexLookup(benchmark::State& state) {
  auto dir = bench_dir();
  {
    TimeIndex idx(dir / "t.timeindex", 0, kEntries * TimeIndex::kEntrySize, true);
    for (int i = 0; i < kEntries; ++i) idx.maybe_append(1'700'000'000'000 + int64_t{i} * 7, int64_t{i} * 10);
    std::mt19937_64 rng(2);
    for (auto _ : state)
      benchmark::DoNotOptimize(idx.lookup_below(1'700'000'000'000 + static_cast<int64_t>(rng() % (kEntries * 7))));
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_TimeIndexLookup);

}  // namespace
