// Cleaner throughput: builds a dirty compacted log in /tmp (keys x versions of 200-byte
// values, 16 MiB segments), then times one pass. Reports MB/s of dirty log cleaned.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "brokerd/storage/batch_builder.h"
#include "brokerd/storage/cleaner.h"
#include "brokerd/storage/log.h"

namespace {

using namespace brokerd::storage;
namespace fs = std::filesystem;

constexpr int64_t kNow = 1'700'000'000'000;

// Args: distinct keys, versions per key, codec.
void BM_CleanDirtyLog(benchmark::State& state) {
  const int keys = static_cast<int>(state.range(0));
  const int versions = static_cast<int>(state.range(1));
  const auto codec = static_cast<Compression>(state.range(2));
  fs::path dir = fs::temp_directory_path() / ("brokerd-cleaner-bench-" + std::to_string(::getpid()));
  LogConfig cfg;
  cfg.segment_bytes = 16 << 20;
  cfg.cleanup_policy = {false, true};
  cfg.file_delete_delay_ms = 0;
  uint64_t dirty_bytes = 0;
  double seconds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(dir);
    auto log = Log::open(dir, cfg, true);
    std::string value(200, 'v');
    for (int v = 0; v < versions; ++v) {
      for (int k = 0; k < keys; k += 100) {
        BatchOptions o;
        o.compression = codec;
        BatchBuilder b(o);
        for (int i = k; i < std::min(keys, k + 100); ++i) {
          std::string key = "user-" + std::to_string(i);
          value[0] = static_cast<char>('a' + v % 26);
          b.add(kNow, key, value);
        }
        auto bytes = b.build();
        log->append(bytes, 0, kNow);
      }
    }
    log->roll(kNow);
    dirty_bytes = log->size_bytes();
    CleanerCheckpoint cp;
    state.ResumeTiming();
    auto stats = clean_log_now(*log, cp, kNow, {}, true);
    state.PauseTiming();
    if (!stats) state.SkipWithError("nothing cleaned");
    else seconds += stats->seconds;
    log.reset();
    fs::remove_all(dir);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(dirty_bytes) * state.iterations());
  state.counters["dirty_MB"] = static_cast<double>(dirty_bytes) / 1e6;
  state.counters["clean_MBps"] =
      seconds > 0 ? static_cast<double>(dirty_bytes) * static_cast<double>(state.iterations()) / seconds / 1e6 : 0;
}

BENCHMARK(BM_CleanDirtyLog)
    ->Args({100000, 5, static_cast<int>(Compression::none)})
    ->Args({100000, 5, static_cast<int>(Compression::lz4)})
    ->Args({100000, 5, static_cast<int>(Compression::zstd)})
    ->Args({1000, 500, static_cast<int>(Compression::none)})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3)
    ->UseRealTime();

}  // namespace
