// Feeds arbitrary bytes to the produce-path validator and, for batches it accepts, to the
// record reader: neither may crash, read out of bounds or allocate without limit.
#include <cstddef>
#include <cstdint>
#include <span>

#include "brokerd/storage/record_batch.h"

using namespace brokerd::storage;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  BatchLimits limits;
  limits.max_decompressed_bytes = 1 << 20;
  // Half the runs skip the CRC so the fuzzer reaches record framing and the codecs.
  limits.check_crc = size > 0 && (data[0] & 1);
  std::vector<BatchInfo> infos;
  auto r = validate_batches(in, limits, &infos);
  for (const auto& info : infos) {
    RecordBatchView batch(in.subspan(info.position, info.size));
    RecordReader reader(batch, limits.max_decompressed_bytes);
    Record rec;
    int32_t n = 0;
    while (reader.next(rec)) ++n;
    if (reader.error() == ErrorCode::none && n != batch.records_count()) __builtin_trap();
  }
  (void)r;
  return 0;
}
