#include "brokerd/protocol/wire.h"

#include <bit>
#include <cstring>
#include <limits>

namespace brokerd::protocol {
namespace {

// bswap is C++23.
inline uint16_t bswap(uint16_t v) { return __builtin_bswap16(v); }
inline uint32_t bswap(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t bswap(uint64_t v) { return __builtin_bswap64(v); }
inline int16_t bswap(int16_t v) { return static_cast<int16_t>(__builtin_bswap16(static_cast<uint16_t>(v))); }
inline int32_t bswap(int32_t v) { return static_cast<int32_t>(__builtin_bswap32(static_cast<uint32_t>(v))); }
inline int64_t bswap(int64_t v) { return static_cast<int64_t>(__builtin_bswap64(static_cast<uint64_t>(v))); }

template <typename T>
T load_be(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  if constexpr (std::endian::native == std::endian::little && sizeof(T) > 1) v = bswap(v);
  return v;
}

}  // namespace

void Reader::need(size_t n) const {
  if (n > remaining()) throw DecodeError("unexpected end of input");
}

std::span<const std::byte> Reader::take(size_t n) {
  need(n);
  auto s = data_.subspan(pos_, n);
  pos_ += n;
  return s;
}

void Reader::skip(size_t n) { take(n); }

Reader Reader::sub(size_t n) { return Reader(take(n), owner_); }

int8_t Reader::i8() { return static_cast<int8_t>(take(1)[0]); }
int16_t Reader::i16() { return load_be<int16_t>(take(2).data()); }
int32_t Reader::i32() { return load_be<int32_t>(take(4).data()); }
int64_t Reader::i64() { return load_be<int64_t>(take(8).data()); }
uint16_t Reader::u16() { return load_be<uint16_t>(take(2).data()); }
uint32_t Reader::u32() { return load_be<uint32_t>(take(4).data()); }
double Reader::f64() { return std::bit_cast<double>(load_be<uint64_t>(take(8).data())); }
bool Reader::boolean() { return i8() != 0; }

Uuid Reader::uuid() {
  Uuid u;
  std::memcpy(u.bytes.data(), take(16).data(), 16);
  return u;
}

uint32_t Reader::uvarint() {
  uint32_t v = 0;
  for (int i = 0; i < 5; ++i) {
    auto b = static_cast<uint8_t>(take(1)[0]);
    // The fifth byte may carry only the top 4 bits of a 32-bit value.
    if (i == 4 && b > 0x0f) throw DecodeError("varint overflows 32 bits");
    v |= static_cast<uint32_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) return v;
  }
  throw DecodeError("varint longer than 5 bytes");
}

uint64_t Reader::uvarlong() {
  uint64_t v = 0;
  for (int i = 0; i < 10; ++i) {
    auto b = static_cast<uint8_t>(take(1)[0]);
    if (i == 9 && b > 0x01) throw DecodeError("varlong overflows 64 bits");
    v |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) return v;
  }
  throw DecodeError("varlong longer than 10 bytes");
}

int32_t Reader::varint() {
  uint32_t u = uvarint();
  return static_cast<int32_t>((u >> 1) ^ (~(u & 1) + 1));
}

int64_t Reader::varlong() {
  uint64_t u = uvarlong();
  return static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
}

int64_t Reader::length(bool flexible, bool int32_length) {
  int64_t n;
  if (flexible) {
    n = static_cast<int64_t>(uvarint()) - 1;
  } else {
    n = int32_length ? i32() : i16();
    if (n < -1) throw DecodeError("negative length");
  }
  if (n > static_cast<int64_t>(remaining())) throw DecodeError("length exceeds input");
  return n;
}

std::optional<std::string> Reader::nullable_string(bool flexible) {
  int64_t n = length(flexible, false);
  if (n < 0) return std::nullopt;
  auto s = take(static_cast<size_t>(n));
  return std::string(reinterpret_cast<const char*>(s.data()), s.size());
}

std::string Reader::string(bool flexible) {
  auto s = nullable_string(flexible);
  if (!s) throw DecodeError("null in a non-nullable string");
  return std::move(*s);
}

std::optional<Bytes> Reader::nullable_bytes(bool flexible) {
  int64_t n = length(flexible, true);
  if (n < 0) return std::nullopt;
  auto s = take(static_cast<size_t>(n));
  return Bytes(s.begin(), s.end());
}

Bytes Reader::bytes(bool flexible) {
  auto b = nullable_bytes(flexible);
  if (!b) throw DecodeError("null in non-nullable bytes");
  return std::move(*b);
}

Records Reader::records(bool flexible) {
  int64_t n = length(flexible, true);
  if (n < 0) return Records::null_records();
  if (n == 0) return Records::empty();
  auto s = take(static_cast<size_t>(n));
  if (!owner_) return Records::of(SharedBytes::copy_of(s));
  return Records::of(SharedBytes{owner_, s});
}

int32_t Reader::array_length(bool flexible) {
  int64_t n;
  if (flexible) {
    n = static_cast<int64_t>(uvarint()) - 1;
  } else {
    n = i32();
    if (n < -1) throw DecodeError("negative array length");
  }
  // Every element takes at least one byte; this bounds what a decoder reserves.
  if (n > static_cast<int64_t>(remaining())) throw DecodeError("array length exceeds input");
  return static_cast<int32_t>(n);
}

bool Reader::struct_present() { return i8() >= 0; }

// ---- Writer ----

void Writer::put(const void* p, size_t n) {
  auto b = static_cast<const std::byte*>(p);
  buf_.insert(buf_.end(), b, b + n);
}

void Writer::i8(int8_t v) { put(&v, 1); }
void Writer::i16(int16_t v) { u16(static_cast<uint16_t>(v)); }
void Writer::i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
void Writer::i64(int64_t v) {
  auto u = static_cast<uint64_t>(v);
  if constexpr (std::endian::native == std::endian::little) u = bswap(u);
  put(&u, 8);
}
void Writer::u16(uint16_t v) {
  if constexpr (std::endian::native == std::endian::little) v = bswap(v);
  put(&v, 2);
}
void Writer::u32(uint32_t v) {
  if constexpr (std::endian::native == std::endian::little) v = bswap(v);
  put(&v, 4);
}
void Writer::f64(double v) { i64(std::bit_cast<int64_t>(v)); }
void Writer::boolean(bool v) { i8(v ? 1 : 0); }
void Writer::uuid(const Uuid& v) { put(v.bytes.data(), 16); }

void Writer::uvarint(uint32_t v) { uvarlong(v); }

void Writer::uvarlong(uint64_t v) {
  uint8_t tmp[10];
  size_t n = 0;
  while (v >= 0x80) {
    tmp[n++] = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  tmp[n++] = static_cast<uint8_t>(v);
  put(tmp, n);
}

void Writer::varint(int32_t v) {
  uvarint((static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31));
}

void Writer::varlong(int64_t v) {
  uvarlong((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

void Writer::string(std::string_view v, bool flexible) {
  if (flexible) {
    if (v.size() >= std::numeric_limits<uint32_t>::max()) throw EncodeError("string too long");
    uvarint(static_cast<uint32_t>(v.size() + 1));
  } else {
    if (v.size() > static_cast<size_t>(std::numeric_limits<int16_t>::max())) {
      throw EncodeError("string longer than 32767 bytes");
    }
    i16(static_cast<int16_t>(v.size()));
  }
  put(v.data(), v.size());
}

void Writer::nullable_string(const std::optional<std::string>& v, bool flexible) {
  if (v) return string(*v, flexible);
  if (flexible) uvarint(0);
  else i16(-1);
}

void Writer::bytes(std::span<const std::byte> v, bool flexible) {
  if (v.size() >= static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    throw EncodeError("bytes too long");
  }
  if (flexible) uvarint(static_cast<uint32_t>(v.size() + 1));
  else i32(static_cast<int32_t>(v.size()));
  put(v.data(), v.size());
}

void Writer::nullable_bytes(const std::optional<Bytes>& v, bool flexible) {
  if (v) return bytes(*v, flexible);
  if (flexible) uvarint(0);
  else i32(-1);
}

void Writer::records(const Records& r, bool flexible) {
  if (r.is_null) {
    if (flexible) uvarint(0);
    else i32(-1);
    return;
  }
  size_t n = r.size();
  if (n >= static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    throw EncodeError("records too long");
  }
  if (flexible) uvarint(static_cast<uint32_t>(n + 1));
  else i32(static_cast<int32_t>(n));
  for (const auto& part : r.parts) {
    if (std::visit([](const auto& p) { return byte_size(p); }, part) == 0) continue;
    flush();
    std::visit([&](const auto& p) {
      flushed_ += byte_size(p);
      chunks_.emplace_back(p);
    }, part);
  }
}

void Writer::array_length(int32_t n, bool flexible) {
  if (flexible) uvarint(static_cast<uint32_t>(n + 1));
  else i32(n);
}

void Writer::raw(std::span<const std::byte> v) { put(v.data(), v.size()); }

void Writer::tagged_raw(const TaggedField& f) {
  uvarint(f.tag);
  uvarint(static_cast<uint32_t>(f.data.size()));
  raw(f.data);
}

void Writer::flush() {
  if (buf_.empty()) return;
  flushed_ += buf_.size();
  chunks_.emplace_back(std::move(buf_));
  buf_ = Bytes();
}

std::vector<OutChunk> Writer::finish() && {
  flush();
  return std::move(chunks_);
}

Bytes Writer::finish_bytes() && {
  if (chunks_.empty()) return std::move(buf_);
  Bytes out;
  out.reserve(size());
  for (const auto& c : chunks_) {
    if (auto* b = std::get_if<Bytes>(&c)) {
      out.insert(out.end(), b->begin(), b->end());
    } else if (auto* s = std::get_if<SharedBytes>(&c)) {
      out.insert(out.end(), s->data.begin(), s->data.end());
    } else {
      throw EncodeError("cannot flatten a file slice into bytes");
    }
  }
  out.insert(out.end(), buf_.begin(), buf_.end());
  return out;
}

}  // namespace brokerd::protocol
