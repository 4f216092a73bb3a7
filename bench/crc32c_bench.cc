// CRC-32C throughput: hardware (SSE4.2, three streams) against the portable tables.
#include <benchmark/benchmark.h>

#include <vector>

#include "brokerd/storage/crc32c.h"

namespace {

std::vector<uint8_t> data_of(size_t n) {
  std::vector<uint8_t> d(n);
  for (size_t i = 0; i < n; ++i) d[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  return d;
}

void BM_Crc32c(benchmark::State& state) {
  auto d = data_of(static_cast<size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(brokerd::storage::crc32c(d.data(), d.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
  state.SetLabel(brokerd::storage::crc32c_hardware_accelerated() ? "sse4.2" : "portable");
}
BENCHMARK(BM_Crc32c)->Arg(1 << 10)->Arg(64 << 10)->Arg(1 << 20);

void BM_Crc32cPortable(benchmark::State& state) {
  auto d = data_of(static_cast<size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(brokerd::storage::crc32c_extend_portable(0, d.data(), d.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(BM_Crc32cPortable)->Arg(1 << 10)->Arg(64 << 10)->Arg(1 << 20);

}  // namespace
