#include "brokerd/storage/compression.h"

#include <lz4frame.h>
#include <snappy.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>

namespace brokerd::storage {
namespace {

const uint8_t* u8(std::span<const std::byte> s) { return reinterpret_cast<const uint8_t*>(s.data()); }

// Grows `out` by up to `want` bytes (never beyond the limit) and returns the new room.
size_t grow(Bytes& out, size_t start, size_t max_out, size_t want) {
  size_t produced = out.size() - start;
  size_t room = std::min(want, max_out + 1 - produced);  // +1 to detect overflow
  out.resize(out.size() + room);
  return room;
}

// ---- gzip ----
bool gzip_compress(std::span<const std::byte> in, Bytes& out, int level) {
  z_stream zs{};
  if (level == kDefaultCompressionLevel) level = Z_DEFAULT_COMPRESSION;
  if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
  size_t start = out.size();
  size_t bound = deflateBound(&zs, in.size()) + 32;
  out.resize(start + bound);
  zs.next_in = const_cast<Bytef*>(u8(in));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data() + start);
  zs.avail_out = static_cast<uInt>(bound);
  int rc = deflate(&zs, Z_FINISH);
  out.resize(start + zs.total_out);
  deflateEnd(&zs);
  return rc == Z_STREAM_END;
}

DecompressStatus gzip_decompress(std::span<const std::byte> in, size_t max_out, Bytes& out) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) return DecompressStatus::corrupt;  // gzip or zlib header
  size_t start = out.size();
  zs.next_in = const_cast<Bytef*>(u8(in));
  zs.avail_in = static_cast<uInt>(in.size());
  DecompressStatus st = DecompressStatus::corrupt;
  for (;;) {
    size_t used = out.size();
    size_t room = grow(out, start, max_out, std::max<size_t>(in.size() * 4, 64 * 1024));
    if (room == 0) { st = DecompressStatus::too_large; break; }
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + used);
    zs.avail_out = static_cast<uInt>(room);
    int rc = inflate(&zs, Z_NO_FLUSH);
    out.resize(used + (room - zs.avail_out));
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) { st = DecompressStatus::ok; break; }
      if (inflateReset(&zs) != Z_OK) break;  // concatenated gzip members
      continue;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) break;
    if (out.size() - start > max_out) { st = DecompressStatus::too_large; break; }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) break;  // truncated input
  }
  inflateEnd(&zs);
  if (out.size() - start > max_out) st = DecompressStatus::too_large;
  if (st != DecompressStatus::ok) out.resize(start);
  return st;
}

// ---- snappy (xerial framing: magic, two int32 versions, then int32-sized raw blocks) ----
constexpr uint8_t kXerialMagic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
constexpr size_t kXerialHeader = 16;
constexpr size_t kXerialBlock = 32 * 1024;  // Java's default block size

void put_be32(Bytes& out, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::byte>(v >> s));
}
uint32_t get_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

bool snappy_compress(std::span<const std::byte> in, Bytes& out) {
  for (uint8_t b : kXerialMagic) out.push_back(static_cast<std::byte>(b));
  put_be32(out, 1);
  put_be32(out, 1);
  const char* src = reinterpret_cast<const char*>(in.data());
  for (size_t off = 0; off < in.size(); off += kXerialBlock) {
    size_t n = std::min(kXerialBlock, in.size() - off);
    size_t len_pos = out.size();
    out.resize(len_pos + 4 + snappy::MaxCompressedLength(n));
    size_t clen = 0;
    snappy::RawCompress(src + off, n, reinterpret_cast<char*>(out.data() + len_pos + 4), &clen);
    out.resize(len_pos + 4 + clen);
    for (int i = 0; i < 4; ++i) out[len_pos + i] = static_cast<std::byte>(clen >> (24 - 8 * i));
  }
  return true;
}

DecompressStatus snappy_block(const uint8_t* p, size_t n, size_t start, size_t max_out, Bytes& out) {
  const char* src = reinterpret_cast<const char*>(p);
  size_t len = 0;
  if (!snappy::GetUncompressedLength(src, n, &len)) return DecompressStatus::corrupt;
  if (out.size() - start + len > max_out) return DecompressStatus::too_large;
  size_t at = out.size();
  out.resize(at + len);
  if (!snappy::RawUncompress(src, n, reinterpret_cast<char*>(out.data() + at))) return DecompressStatus::corrupt;
  return DecompressStatus::ok;
}

DecompressStatus snappy_decompress(std::span<const std::byte> in, size_t max_out, Bytes& out) {
  size_t start = out.size();
  const uint8_t* p = u8(in);
  DecompressStatus st = DecompressStatus::ok;
  if (in.size() >= kXerialHeader && std::memcmp(p, kXerialMagic, 8) == 0) {
    size_t off = kXerialHeader;
    while (off < in.size() && st == DecompressStatus::ok) {
      if (in.size() - off < 4) { st = DecompressStatus::corrupt; break; }
      size_t n = get_be32(p + off);
      off += 4;
      if (n > in.size() - off) { st = DecompressStatus::corrupt; break; }
      st = snappy_block(p + off, n, start, max_out, out);
      off += n;
    }
  } else {
    st = snappy_block(p, in.size(), start, max_out, out);
  }
  if (st != DecompressStatus::ok) out.resize(start);
  return st;
}

// ---- lz4 frame ----
bool lz4_compress(std::span<const std::byte> in, Bytes& out, int level) {
  LZ4F_preferences_t prefs{};
  if (level != kDefaultCompressionLevel) prefs.compressionLevel = level;
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;  // what Java and librdkafka use
  size_t start = out.size();
  size_t bound = LZ4F_compressFrameBound(in.size(), &prefs);
  out.resize(start + bound);
  size_t n = LZ4F_compressFrame(out.data() + start, bound, in.data(), in.size(), &prefs);
  if (LZ4F_isError(n)) { out.resize(start); return false; }
  out.resize(start + n);
  return true;
}

DecompressStatus lz4_decompress(std::span<const std::byte> in, size_t max_out, Bytes& out) {
  LZ4F_dctx* dctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) return DecompressStatus::corrupt;
  size_t start = out.size();
  const uint8_t* src = u8(in);
  size_t left = in.size();
  DecompressStatus st = DecompressStatus::corrupt;
  for (;;) {
    size_t used = out.size();
    size_t room = grow(out, start, max_out, std::max<size_t>(in.size() * 4, 64 * 1024));
    if (room == 0) { st = DecompressStatus::too_large; break; }
    size_t dst_n = room, src_n = left;
    size_t hint = LZ4F_decompress(dctx, out.data() + used, &dst_n, src, &src_n, nullptr);
    out.resize(used + dst_n);
    if (LZ4F_isError(hint)) break;
    src += src_n;
    left -= src_n;
    if (out.size() - start > max_out) { st = DecompressStatus::too_large; break; }
    if (hint == 0) { st = left == 0 ? DecompressStatus::ok : DecompressStatus::corrupt; break; }
    if (left == 0 && dst_n == 0) break;  // truncated frame
  }
  LZ4F_freeDecompressionContext(dctx);
  if (st != DecompressStatus::ok) out.resize(start);
  return st;
}

// ---- zstd ----
bool zstd_compress(std::span<const std::byte> in, Bytes& out, int level) {
  size_t start = out.size();
  size_t bound = ZSTD_compressBound(in.size());
  out.resize(start + bound);
  size_t n = ZSTD_compress(out.data() + start, bound, in.data(), in.size(), level == kDefaultCompressionLevel ? 3 : level);
  if (ZSTD_isError(n)) { out.resize(start); return false; }
  out.resize(start + n);
  return true;
}

DecompressStatus zstd_decompress(std::span<const std::byte> in, size_t max_out, Bytes& out) {
  ZSTD_DStream* ds = ZSTD_createDStream();
  if (!ds) return DecompressStatus::corrupt;
  ZSTD_DCtx_setParameter(ds, ZSTD_d_windowLogMax, 27);  // refuse absurd windows (128 MiB)
  size_t start = out.size();
  ZSTD_inBuffer ib{in.data(), in.size(), 0};
  DecompressStatus st = DecompressStatus::corrupt;
  size_t last = 1;
  for (;;) {
    size_t used = out.size();
    size_t room = grow(out, start, max_out, std::max<size_t>(in.size() * 4, 64 * 1024));
    if (room == 0) { st = DecompressStatus::too_large; break; }
    ZSTD_outBuffer ob{out.data() + used, room, 0};
    last = ZSTD_decompressStream(ds, &ob, &ib);
    out.resize(used + ob.pos);
    if (ZSTD_isError(last)) break;
    if (out.size() - start > max_out) { st = DecompressStatus::too_large; break; }
    if (ib.pos == ib.size && ob.pos < room) {  // all input consumed and output drained
      st = last == 0 ? DecompressStatus::ok : DecompressStatus::corrupt;
      break;
    }
  }
  ZSTD_freeDStream(ds);
  if (st != DecompressStatus::ok) out.resize(start);
  return st;
}

}  // namespace

std::string_view compression_name(Compression c) {
  switch (c) {
    case Compression::none: return "none";
    case Compression::gzip: return "gzip";
    case Compression::snappy: return "snappy";
    case Compression::lz4: return "lz4";
    case Compression::zstd: return "zstd";
  }
  return "unknown";
}

bool compress(Compression codec, std::span<const std::byte> in, Bytes& out, int level) {
  switch (codec) {
    case Compression::none: out.insert(out.end(), in.begin(), in.end()); return true;
    case Compression::gzip: return gzip_compress(in, out, level);
    case Compression::snappy: return snappy_compress(in, out);
    case Compression::lz4: return lz4_compress(in, out, level);
    case Compression::zstd: return zstd_compress(in, out, level);
  }
  return false;
}

DecompressStatus decompress(Compression codec, std::span<const std::byte> in, size_t max_out, Bytes& out) {
  switch (codec) {
    case Compression::none:
      if (in.size() > max_out) return DecompressStatus::too_large;
      out.insert(out.end(), in.begin(), in.end());
      return DecompressStatus::ok;
    case Compression::gzip: return gzip_decompress(in, max_out, out);
    case Compression::snappy: return snappy_decompress(in, max_out, out);
    case Compression::lz4: return lz4_decompress(in, max_out, out);
    case Compression::zstd: return zstd_decompress(in, max_out, out);
  }
  return DecompressStatus::unsupported;
}

}  // namespace brokerd::storage
