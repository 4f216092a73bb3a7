#include "brokerd/protocol/records.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include "brokerd/protocol/wire.h"
#include "unit/protocol/test_bytes.h"

namespace brokerd::protocol {
namespace {

using test::bytes_of;

TEST(Records, DecodedRecordsAliasTheFrame) {
  auto frame = std::make_shared<Bytes>(bytes_of({0x00, 0x00, 0x00, 0x03, 7, 8, 9}));
  Records rec;
  {
    Reader r(*frame, frame);
    rec = r.records(false);
  }
  ASSERT_FALSE(rec.is_null);
  ASSERT_EQ(rec.parts.size(), 1u);
  const auto& part = std::get<SharedBytes>(rec.parts[0]);
  EXPECT_EQ(part.data.data(), frame->data() + 4);  // no copy
  EXPECT_EQ(frame.use_count(), 2);
  EXPECT_EQ(rec.to_bytes(), bytes_of({7, 8, 9}));
}

TEST(Records, NullEmptyAndEquality) {
  Bytes in = bytes_of({0x00, 0x01});
  Reader r(in);
  EXPECT_TRUE(r.records(true).is_null);
  Records empty = r.records(true);
  EXPECT_FALSE(empty.is_null);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_NE(Records::null_records(), Records::empty());

  // Equal content split differently is equal.
  Records a = Records::of(SharedBytes::copy_of(bytes_of({1, 2, 3})));
  Records b = Records::empty();
  b.parts.emplace_back(SharedBytes::copy_of(bytes_of({1})));
  b.parts.emplace_back(SharedBytes::copy_of(bytes_of({2, 3})));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, Records::of(SharedBytes::copy_of(bytes_of({1, 2, 4}))));
}

TEST(Records, FileSlicesAreChunksAndReadWithPread) {
  char path[] = "/tmp/brokerd_records_testXXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::unlink(path);
  const char content[] = "0123456789";
  ASSERT_EQ(::write(fd, content, 10), 10);
  auto file = std::make_shared<const FileHandle>(fd);

  Records rec = Records::empty();
  rec.parts.emplace_back(SharedBytes::copy_of(bytes_of({'a'})));
  rec.parts.emplace_back(FileSlice{file, 2, 5});
  EXPECT_EQ(rec.size(), 6u);
  EXPECT_EQ(rec.to_bytes(), bytes_of({'a', '2', '3', '4', '5', '6'}));

  Writer w;
  w.i8(1);
  w.records(rec, true);
  w.i8(2);
  EXPECT_EQ(w.size(), 1u + 1u + 6u + 1u);
  Writer w2;
  w2.records(rec, false);
  EXPECT_THROW(std::move(w2).finish_bytes(), EncodeError);
  auto chunks = std::move(w).finish();
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_TRUE(std::holds_alternative<Bytes>(chunks[0]));
  EXPECT_TRUE(std::holds_alternative<SharedBytes>(chunks[1]));
  EXPECT_TRUE(std::holds_alternative<FileSlice>(chunks[2]));
  EXPECT_TRUE(std::holds_alternative<Bytes>(chunks[3]));
  EXPECT_EQ(std::get<Bytes>(chunks[0]), bytes_of({1, 7}));  // int8, then compact length 6+1

  Records past_end = Records::empty();
  past_end.parts.emplace_back(FileSlice{file, 8, 5});
  EXPECT_THROW(past_end.to_bytes(), std::runtime_error);
}

}  // namespace
}  // namespace brokerd::protocol
