#pragma once
// Kafka wire primitives: fixed-width integers, varints, (compact) strings, bytes, arrays,
// records and tagged fields. Decoders check every length against the bytes left before
// allocating, so a hostile length prefix costs nothing.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "brokerd/common/bytes.h"
#include "brokerd/protocol/records.h"
#include "brokerd/protocol/uuid.h"

namespace brokerd::protocol {

class DecodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class EncodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A tagged field this build does not know; kept as raw bytes so it survives a re-encode.
struct TaggedField {
  uint32_t tag = 0;
  Bytes data;
  bool operator==(const TaggedField&) const = default;
};

class Reader {
 public:
  // `owner` keeps `data` alive; records() hands out views that share it.
  explicit Reader(std::span<const std::byte> data, std::shared_ptr<const void> owner = {})
      : data_(data), owner_(std::move(owner)) {}

  size_t remaining() const { return data_.size() - pos_; }
  size_t position() const { return pos_; }

  int8_t i8();
  int16_t i16();
  int32_t i32();
  int64_t i64();
  uint16_t u16();
  uint32_t u32();
  double f64();
  bool boolean();
  Uuid uuid();

  uint32_t uvarint();   // at most 5 bytes
  uint64_t uvarlong();  // at most 10 bytes
  int32_t varint();     // zigzag
  int64_t varlong();    // zigzag

  std::string string(bool flexible);
  std::optional<std::string> nullable_string(bool flexible);
  Bytes bytes(bool flexible);
  std::optional<Bytes> nullable_bytes(bool flexible);
  // A view of the input (shared with `owner`); copied only when the reader has no owner.
  Records records(bool flexible);
  // Element count, -1 for null. A count larger than the bytes left is refused.
  int32_t array_length(bool flexible);
  // The int8 marker before a nullable struct: false when null.
  bool struct_present();

  void skip(size_t n);
  std::span<const std::byte> take(size_t n);
  // A reader over the next n bytes, sharing the owner.
  Reader sub(size_t n);
  // Reads a tagged-field section; calls on_known(tag, reader) for each field and returns
  // true if it consumed the tag, else the field is stored in `unknown`.
  template <typename F>
  void tagged_fields(std::vector<TaggedField>& unknown, F&& on_known);

 private:
  void need(size_t n) const;
  // Length of a (compact) string/bytes: -1 for null.
  int64_t length(bool flexible, bool int32_length);

  std::span<const std::byte> data_;
  std::shared_ptr<const void> owner_;
  size_t pos_ = 0;
};

class Writer {
 public:
  void i8(int8_t v);
  void i16(int16_t v);
  void i32(int32_t v);
  void i64(int64_t v);
  void u16(uint16_t v);
  void u32(uint32_t v);
  void f64(double v);
  void boolean(bool v);
  void uuid(const Uuid& v);

  void uvarint(uint32_t v);
  void uvarlong(uint64_t v);
  void varint(int32_t v);
  void varlong(int64_t v);

  void string(std::string_view v, bool flexible);
  void nullable_string(const std::optional<std::string>& v, bool flexible);
  void bytes(std::span<const std::byte> v, bool flexible);
  void nullable_bytes(const std::optional<Bytes>& v, bool flexible);
  // Appends the record parts as their own chunks, without copying them.
  void records(const Records& r, bool flexible);
  void array_length(int32_t n, bool flexible);  // -1 = null
  void raw(std::span<const std::byte> v);
  // Writes a tagged field: tag, size, then whatever `encode_value(Writer&)` writes.
  template <typename F>
  void tagged_field(uint32_t tag, F&& encode_value);
  // Writes a field kept from decoding as it was received.
  void tagged_raw(const TaggedField& f);

  size_t size() const { return flushed_ + buf_.size(); }
  std::vector<OutChunk> finish() &&;
  // One contiguous buffer; shared parts are copied. Throws EncodeError on a file slice.
  Bytes finish_bytes() &&;

 private:
  void put(const void* p, size_t n);
  void flush();

  Bytes buf_;
  std::vector<OutChunk> chunks_;
  size_t flushed_ = 0;
};

template <typename F>
void Reader::tagged_fields(std::vector<TaggedField>& unknown, F&& on_known) {
  uint32_t count = uvarint();
  if (count > remaining()) throw DecodeError("tagged field count exceeds input");
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t tag = uvarint();
    uint32_t size = uvarint();
    Reader value = sub(size);
    if (!on_known(tag, value)) {
      auto raw = value.take(value.remaining());
      unknown.push_back(TaggedField{tag, Bytes(raw.begin(), raw.end())});
    }
  }
}

template <typename F>
void Writer::tagged_field(uint32_t tag, F&& encode_value) {
  Writer value;
  encode_value(value);
  Bytes b = std::move(value).finish_bytes();
  uvarint(tag);
  uvarint(static_cast<uint32_t>(b.size()));
  raw(b);
}

}  // namespace brokerd::protocol
