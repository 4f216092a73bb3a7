#include "brokerd/storage/recompress.h"

#include <cstring>

#include "brokerd/storage/crc32c.h"

namespace brokerd::storage {
namespace {

void put_i32_be(std::byte* p, uint32_t v) {
  for (int i = 3; i >= 0; --i) {
    p[i] = static_cast<std::byte>(v & 0xff);
    v >>= 8;
  }
}

}  // namespace

std::optional<Recompressed> recompress_batches(std::span<const std::byte> batches, const std::vector<BatchInfo>& infos,
                                               Compression codec, int level, size_t max_decompressed) {
  bool any = false;
  for (const auto& i : infos) any = any || i.compression != codec;
  if (!any) return std::nullopt;
  Recompressed out;
  out.batches.reserve(batches.size());
  Bytes plain;
  for (const auto& i : infos) {
    auto batch = batches.subspan(i.position, i.size);
    if (i.compression == codec) {
      out.batches.insert(out.batches.end(), batch.begin(), batch.end());
      continue;
    }
    // The records as written, then in the topic's codec.
    auto records = batch.subspan(batch_layout::header_size);
    std::span<const std::byte> source = records;
    if (i.compression != Compression::none) {
      plain.clear();
      if (decompress(i.compression, records, max_decompressed, plain) != DecompressStatus::ok) {
        out.error = "a batch could not be decompressed for re-encoding";
        return out;
      }
      source = plain;
    }
    const size_t start = out.batches.size();
    out.batches.insert(out.batches.end(), batch.begin(), batch.begin() + batch_layout::header_size);
    if (!compress(codec, source, out.batches, level)) {
      out.error = std::string("re-encoding a batch with ") + std::string(compression_name(codec)) + " failed";
      return out;
    }
    std::byte* b = out.batches.data() + start;
    const size_t size = out.batches.size() - start;
    put_i32_be(b + batch_layout::batch_length, static_cast<uint32_t>(size - batch_layout::log_overhead));
    auto attributes = static_cast<uint16_t>((std::to_integer<uint16_t>(b[batch_layout::attributes]) << 8) |
                                            std::to_integer<uint16_t>(b[batch_layout::attributes + 1]));
    attributes = static_cast<uint16_t>((attributes & ~batch_attr::codec_mask) | static_cast<uint16_t>(codec));
    b[batch_layout::attributes] = static_cast<std::byte>(attributes >> 8);
    b[batch_layout::attributes + 1] = static_cast<std::byte>(attributes & 0xff);
    put_i32_be(b + batch_layout::crc, crc32c(b + batch_layout::attributes, size - batch_layout::attributes));
  }
  return out;
}

}  // namespace brokerd::storage
