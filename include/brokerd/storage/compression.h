#pragma once
// The four codecs of RecordBatch v2, with bounded decompression (a small batch must not
// be able to make the broker allocate gigabytes).
#include <cstddef>
#include <climits>
#include <cstdint>
#include <span>
#include <string_view>

#include "brokerd/common/bytes.h"

namespace brokerd::storage {

// Values are the codec bits (0-2) of the batch attributes.
enum class Compression : uint8_t { none = 0, gzip = 1, snappy = 2, lz4 = 3, zstd = 4 };

constexpr bool valid_compression(int codec) { return codec >= 0 && codec <= 4; }
std::string_view compression_name(Compression c);

enum class DecompressStatus { ok, corrupt, too_large, unsupported };

// The codec's own default level, for compress().
constexpr int kDefaultCompressionLevel = INT32_MIN;

// Appends the compressed form of `in` to `out`. gzip writes gzip framing, snappy the
// xerial framing Java clients write, lz4 the LZ4 frame format, zstd a single frame.
// `level` is the codec's (gzip -1..9, lz4 1..17, zstd up to 22; snappy has none).
// Returns false only on an internal codec failure.
bool compress(Compression codec, std::span<const std::byte> in, Bytes& out, int level = kDefaultCompressionLevel);

// Appends the decompressed form of `in` to `out`, failing with too_large once more than
// `max_out` bytes would be produced. Snappy accepts both xerial-framed and raw blocks.
DecompressStatus decompress(Compression codec, std::span<const std::byte> in, size_t max_out, Bytes& out);

}  // namespace brokerd::storage
