// Produce-path cost: validate, assign offsets and write batches of 1 KB records to a Log
// in /tmp (page cache, no fsync), as the broker does for each produce request.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "brokerd/storage/batch_builder.h"
#include "brokerd/storage/log.h"

namespace {

using namespace brokerd::storage;

brokerd::Bytes batch_of(size_t batch_bytes, Compression c) {
  BatchOptions o;
  o.compression = c;
  BatchBuilder b(o);
  std::string value(1000, 'v');
  for (size_t i = 0; b.estimated_size() + 1050 <= batch_bytes; ++i) {
    for (size_t j = 0; j < value.size(); j += 64) value[j] = static_cast<char>('a' + (i + j) % 26);
    b.add(1'700'000'000'000 + static_cast<int64_t>(i), "key-" + std::to_string(i), value);
  }
  return b.build();
}

void run(benchmark::State& state, Compression c) {
  auto dir = std::filesystem::temp_directory_path() / ("brokerd-append-bench-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  LogConfig cfg;
  cfg.segment_bytes = 256 << 20;  // rolls happen within the run
  cfg.retention_bytes = 512 << 20;
  cfg.file_delete_delay_ms = 0;
  auto log = Log::open(dir / "bench-0", cfg, true);
  const brokerd::Bytes tmpl = batch_of(static_cast<size_t>(state.range(0)), c);
  brokerd::Bytes work = tmpl;
  int64_t records = RecordBatchView(tmpl).records_count();
  int64_t n = 0;
  for (auto _ : state) {
    auto r = log->append(work, 1, 1'700'000'000'000);
    if (r.error != ErrorCode::none) {
      state.SkipWithError("append failed");
      break;
    }
    if (++n % 256 == 0) {  // keep /tmp bounded
      state.PauseTiming();
      log->enforce_retention(1'700'000'000'000, log->log_end_offset());
      state.ResumeTiming();
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * tmpl.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * records);
  log->close();
  log.reset();
  std::filesystem::remove_all(dir);
}

void BM_LogAppend(benchmark::State& state) { run(state, Compression::none); }
BENCHMARK(BM_LogAppend)->Arg(16 << 10)->Arg(1 << 20)->UseRealTime();

void BM_LogAppendLz4(benchmark::State& state) { run(state, Compression::lz4); }
BENCHMARK(BM_LogAppendLz4)->Arg(16 << 10)->Arg(1 << 20)->UseRealTime();

void BM_ValidateOnly(benchmark::State& state) {
  const brokerd::Bytes b = batch_of(static_cast<size_t>(state.range(0)), Compression::none);
  BatchLimits lim;
  for (auto _ : state) benchmark::DoNotOptimize(validate_batches(b, lim).error);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * b.size()));
}
BENCHMARK(BM_ValidateOnly)->Arg(16 << 10)->Arg(1 << 20);

}  // namespace
