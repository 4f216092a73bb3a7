#include "brokerd/protocol/wire.h"

#include <gtest/gtest.h>

#include <limits>

#include "unit/protocol/test_bytes.h"

namespace brokerd::protocol {
namespace {

using test::bytes_of;

template <typename F>
Bytes written(F&& f) {
  Writer w;
  f(w);
  return std::move(w).finish_bytes();
}

TEST(Varint, UnsignedBoundaries) {
  struct Case {
    uint32_t value;
    Bytes encoded;
  };
  const Case cases[] = {
      {0, bytes_of({0x00})},
      {1, bytes_of({0x01})},
      {127, bytes_of({0x7f})},
      {128, bytes_of({0x80, 0x01})},
      {300, bytes_of({0xac, 0x02})},
      {16383, bytes_of({0xff, 0x7f})},
      {16384, bytes_of({0x80, 0x80, 0x01})},
      {(1u << 21) - 1, bytes_of({0xff, 0xff, 0x7f})},
      {(1u << 28) - 1, bytes_of({0xff, 0xff, 0xff, 0x7f})},
      {1u << 28, bytes_of({0x80, 0x80, 0x80, 0x80, 0x01})},
      {std::numeric_limits<uint32_t>::max(), bytes_of({0xff, 0xff, 0xff, 0xff, 0x0f})},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(written([&](Writer& w) { w.uvarint(c.value); }), c.encoded) << c.value;
    Reader r(c.encoded);
    EXPECT_EQ(r.uvarint(), c.value);
    EXPECT_EQ(r.remaining(), 0u);
  }
}

TEST(Varint, SignedZigzag) {
  const std::pair<int32_t, Bytes> cases[] = {
      {0, bytes_of({0x00})},
      {-1, bytes_of({0x01})},
      {1, bytes_of({0x02})},
      {-2, bytes_of({0x03})},
      {63, bytes_of({0x7e})},
      {-64, bytes_of({0x7f})},
      {64, bytes_of({0x80, 0x01})},
      {std::numeric_limits<int32_t>::max(), bytes_of({0xfe, 0xff, 0xff, 0xff, 0x0f})},
      {std::numeric_limits<int32_t>::min(), bytes_of({0xff, 0xff, 0xff, 0xff, 0x0f})},
  };
  for (const auto& [value, encoded] : cases) {
    EXPECT_EQ(written([&](Writer& w) { w.varint(value); }), encoded) << value;
    Reader r(encoded);
    EXPECT_EQ(r.varint(), value);
  }
}

TEST(Varint, LongBoundaries) {
  const int64_t values[] = {0, -1, 1, std::numeric_limits<int32_t>::max() + int64_t{1},
                            std::numeric_limits<int64_t>::max(),
                            std::numeric_limits<int64_t>::min()};
  for (int64_t v : values) {
    Bytes b = written([&](Writer& w) { w.varlong(v); });
    EXPECT_LE(b.size(), 10u);
    Reader r(b);
    EXPECT_EQ(r.varlong(), v);
    EXPECT_EQ(r.remaining(), 0u);
  }
  Bytes max = written([](Writer& w) { w.uvarlong(std::numeric_limits<uint64_t>::max()); });
  EXPECT_EQ(max, bytes_of({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
}

TEST(Varint, OverlongAndOverflowRejected) {
  // Six bytes for a 32-bit varint.
  Bytes six = bytes_of({0x80, 0x80, 0x80, 0x80, 0x80, 0x00});
  EXPECT_THROW(Reader(six).uvarint(), DecodeError);
  // Five bytes whose last one sets bits above 32.
  Bytes overflow = bytes_of({0xff, 0xff, 0xff, 0xff, 0x1f});
  EXPECT_THROW(Reader(overflow).uvarint(), DecodeError);
  Bytes eleven(11, std::byte{0x80});
  EXPECT_THROW(Reader(eleven).uvarlong(), DecodeError);
  Bytes ten_overflow = bytes_of({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02});
  EXPECT_THROW(Reader(ten_overflow).uvarlong(), DecodeError);
  // Truncated: continuation bit set on the last byte.
  Bytes cut = bytes_of({0x80, 0x80});
  EXPECT_THROW(Reader(cut).uvarint(), DecodeError);
}

TEST(Strings, CompactAndClassic) {
  EXPECT_EQ(written([](Writer& w) { w.string("abc", true); }),
            bytes_of({0x04, 'a', 'b', 'c'}));
  EXPECT_EQ(written([](Writer& w) { w.string("abc", false); }),
            bytes_of({0x00, 0x03, 'a', 'b', 'c'}));
  EXPECT_EQ(written([](Writer& w) { w.string("", true); }), bytes_of({0x01}));
  EXPECT_EQ(written([](Writer& w) { w.nullable_string(std::nullopt, true); }), bytes_of({0x00}));
  EXPECT_EQ(written([](Writer& w) { w.nullable_string(std::nullopt, false); }),
            bytes_of({0xff, 0xff}));

  Bytes compact = bytes_of({0x04, 'x', 'y', 'z', 0x00});
  Reader r(compact);
  EXPECT_EQ(r.string(true), "xyz");
  EXPECT_EQ(r.nullable_string(true), std::nullopt);
  EXPECT_EQ(r.remaining(), 0u);

  Bytes null_classic = bytes_of({0xff, 0xff});
  EXPECT_THROW(Reader(null_classic).string(false), DecodeError);
  Bytes bad_length = bytes_of({0xff, 0xfe});
  EXPECT_THROW(Reader(bad_length).nullable_string(false), DecodeError);
  std::string too_long(40000, 'x');
  Writer w;
  EXPECT_THROW(w.string(too_long, false), EncodeError);
}

TEST(Bytes, CompactAndClassic) {
  Bytes payload = bytes_of({1, 2, 3});
  EXPECT_EQ(written([&](Writer& w) { w.bytes(payload, true); }), bytes_of({0x04, 1, 2, 3}));
  EXPECT_EQ(written([&](Writer& w) { w.bytes(payload, false); }),
            bytes_of({0, 0, 0, 3, 1, 2, 3}));
  EXPECT_EQ(written([](Writer& w) { w.nullable_bytes(std::nullopt, false); }),
            bytes_of({0xff, 0xff, 0xff, 0xff}));
  Bytes in = bytes_of({0x00, 0x01, 0x03, 9, 8});
  Reader r(in);
  EXPECT_EQ(r.nullable_bytes(true), std::nullopt);
  EXPECT_EQ(r.bytes(true), Bytes{});
  EXPECT_EQ(r.bytes(true), bytes_of({9, 8}));
}

TEST(Lengths, HugePrefixesThrowWithoutAllocating) {
  // A 2 GB length with nothing behind it must fail before any allocation.
  Bytes classic = bytes_of({0x7f, 0xff, 0xff, 0xff});
  EXPECT_THROW(Reader(classic).bytes(false), DecodeError);
  EXPECT_THROW(Reader(classic).records(false), DecodeError);
  EXPECT_THROW(Reader(classic).array_length(false), DecodeError);
  Bytes compact = bytes_of({0xff, 0xff, 0xff, 0xff, 0x0f});
  EXPECT_THROW(Reader(compact).bytes(true), DecodeError);
  EXPECT_THROW(Reader(compact).string(true), DecodeError);
  EXPECT_THROW(Reader(compact).array_length(true), DecodeError);
  Bytes classic_string = bytes_of({0x7f, 0xff, 'a'});
  EXPECT_THROW(Reader(classic_string).string(false), DecodeError);
}

TEST(Arrays, LengthEncodings) {
  EXPECT_EQ(written([](Writer& w) { w.array_length(-1, true); }), bytes_of({0x00}));
  EXPECT_EQ(written([](Writer& w) { w.array_length(2, true); }), bytes_of({0x03}));
  EXPECT_EQ(written([](Writer& w) { w.array_length(-1, false); }),
            bytes_of({0xff, 0xff, 0xff, 0xff}));
  Bytes in = bytes_of({0x00, 0x03, 0xaa, 0xbb});
  Reader r(in);
  EXPECT_EQ(r.array_length(true), -1);
  EXPECT_EQ(r.array_length(true), 2);
  Bytes negative = bytes_of({0xff, 0xff, 0xff, 0xfe});
  EXPECT_THROW(Reader(negative).array_length(false), DecodeError);
}

TEST(FixedWidth, BigEndian) {
  Bytes b = written([](Writer& w) {
    w.i16(0x0102);
    w.i32(-2);
    w.i64(0x0102030405060708);
    w.u16(0xfffe);
    w.u32(0x80000001u);
    w.f64(1.5);
    w.boolean(true);
  });
  EXPECT_EQ(b, bytes_of({0x01, 0x02, 0xff, 0xff, 0xff, 0xfe, 1, 2, 3, 4, 5, 6, 7, 8, 0xff, 0xfe,
                         0x80, 0, 0, 1, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 1}));
  Reader r(b);
  EXPECT_EQ(r.i16(), 0x0102);
  EXPECT_EQ(r.i32(), -2);
  EXPECT_EQ(r.i64(), 0x0102030405060708);
  EXPECT_EQ(r.u16(), 0xfffe);
  EXPECT_EQ(r.u32(), 0x80000001u);
  EXPECT_EQ(r.f64(), 1.5);
  EXPECT_TRUE(r.boolean());
  EXPECT_THROW(r.i8(), DecodeError);
}

TEST(TaggedSection, UnknownFieldsKeptRawAndSkipped) {
  // Two fields: tag 3 (2 bytes) and tag 200 (1 byte), then a trailing int8.
  Bytes in = bytes_of({0x02, 0x03, 0x02, 0xaa, 0xbb, 0xc8, 0x01, 0x01, 0xcc, 0x7f});
  Reader r(in);
  std::vector<TaggedField> unknown;
  r.tagged_fields(unknown, [](uint32_t, Reader&) { return false; });
  ASSERT_EQ(unknown.size(), 2u);
  EXPECT_EQ(unknown[0].tag, 3u);
  EXPECT_EQ(unknown[0].data, bytes_of({0xaa, 0xbb}));
  EXPECT_EQ(unknown[1].tag, 200u);
  EXPECT_EQ(r.i8(), 0x7f);

  Writer w;
  w.uvarint(2);
  for (const auto& f : unknown) w.tagged_raw(f);
  w.i8(0x7f);
  EXPECT_EQ(std::move(w).finish_bytes(), in);

  // A size beyond the input.
  Bytes bad = bytes_of({0x01, 0x00, 0x05, 0x00});
  Reader rb(bad);
  EXPECT_THROW(rb.tagged_fields(unknown, [](uint32_t, Reader&) { return false; }), DecodeError);
}

TEST(Writer, SizeCountsEverything) {
  Writer w;
  w.i32(1);
  auto shared = SharedBytes::copy_of(bytes_of({1, 2, 3, 4, 5}));
  w.records(Records::of(shared), true);
  w.i8(0);
  EXPECT_EQ(w.size(), 4u + 1u + 5u + 1u);
  auto chunks = std::move(w).finish();
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_TRUE(std::holds_alternative<SharedBytes>(chunks[1]));
  EXPECT_EQ(std::get<SharedBytes>(chunks[1]).data.data(), shared.data.data());
}

}  // namespace
}  // namespace brokerd::protocol
