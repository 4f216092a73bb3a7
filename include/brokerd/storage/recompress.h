#pragma once
// Broker-side compression (a topic's compression.type other than "producer"): client batches
// written with another codec are re-encoded, their header fields kept (offsets, timestamps,
// producer id, epoch and sequence, count) and their CRC computed again.
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "brokerd/common/bytes.h"
#include "brokerd/storage/compression.h"
#include "brokerd/storage/record_batch.h"

namespace brokerd::storage {

struct Recompressed {
  Bytes batches;      // every batch, re-encoded or copied
  std::string error;  // non-empty when a batch could not be re-encoded
};

// `infos` are the validated batches of `batches`. nullopt when every one already uses `codec`.
std::optional<Recompressed> recompress_batches(std::span<const std::byte> batches, const std::vector<BatchInfo>& infos,
                                               Compression codec, int level,
                                               size_t max_decompressed = kDefaultMaxDecompressedBytes);

}  // namespace brokerd::storage
