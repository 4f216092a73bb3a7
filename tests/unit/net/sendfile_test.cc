#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <thread>

#include "brokerd/net/resident.h"
#include "server_fixture.h"

namespace brokerd::net::test {
namespace {

using boost::asio::awaitable;

// A file of pseudo-random bytes in the working directory (a real disk, unlike a tmpfs /tmp),
// removed at the end.
struct TempFile {
  explicit TempFile(size_t size) : path(std::filesystem::current_path() /
                                        ("net_test_" + std::to_string(::getpid()) + "_" + std::to_string(size) + ".bin")) {
    content.resize(size);
    std::minstd_rand rng(static_cast<uint32_t>(size));
    for (auto& b : content) b = static_cast<char>(rng());
    int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
    ::fsync(fd);
    // Clean pages can now be dropped, so the file starts cold (where the kernel allows it).
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
  ~TempFile() { std::filesystem::remove(path); }
  std::shared_ptr<const FileHandle> open() const {
    return std::make_shared<FileHandle>(::open(path.c_str(), O_RDONLY));
  }
  std::filesystem::path path;
  std::string content;
};

TEST_F(ServerFixture, FileSlicesArriveByteExact) {
  TempFile file(6 * 1024 * 1024 + 123);
  auto handle = file.open();
  ASSERT_GE(handle->fd(), 0);
  const std::string shared_text = "-shared-";
  auto shared_owner = std::make_shared<std::string>(shared_text);
  struct Piece {
    uint64_t pos;
    uint32_t size;
  };
  const std::vector<Piece> pieces{{0, 1000}, {4096 + 7, 5 * 1024 * 1024 + 3}, {file.content.size() - 10, 10}};
  start([&](Request req) -> awaitable<Response> {
    Response r = echo_response(req);  // correlation id + body
    for (const auto& p : pieces) {
      r.chunks.emplace_back(FileSlice{handle, p.pos, p.size});
      r.chunks.emplace_back(SharedBytes{shared_owner, std::as_bytes(std::span(shared_owner->data(), shared_owner->size()))});
    }
    co_return r;
  });
  std::string expected_tail;
  for (const auto& p : pieces) expected_tail += file.content.substr(p.pos, p.size) + shared_text;
  Client c(port());
  for (int i = 0; i < 3; ++i) c.send(0, i, "head");
  for (int i = 0; i < 3; ++i) {
    auto r = c.receive_echo(std::chrono::milliseconds(10000));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->first, i);
    ASSERT_EQ(r->second.size(), 4 + expected_tail.size());
    EXPECT_TRUE(r->second == "head" + expected_tail) << "response " << i << " differs";
  }
}

TEST_F(ServerFixture, SliceBeyondEndOfFileClosesConnection) {
  TempFile file(1000);
  auto handle = file.open();
  // By value: the dispatcher may still run after this test's last line (`other`'s request).
  start([handle](Request req) -> awaitable<Response> {
    Response r = echo_response(req);
    r.chunks.emplace_back(FileSlice{handle, 500, 1000});  // 500 bytes short
    co_return r;
  });
  Client c(port());
  c.send(0, 1, "");
  EXPECT_FALSE(c.receive_echo(std::chrono::milliseconds(3000)));
  EXPECT_TRUE(c.closed_within(std::chrono::milliseconds(3000)));
  Client other(port());
  EXPECT_NO_THROW(other.send(0, 2, ""));
}

TEST_F(ServerFixture, ClientGoneDuringSendfileDoesNotHurtTheServer) {
  TempFile file(8 * 1024 * 1024);
  auto handle = file.open();
  start([handle](Request req) -> awaitable<Response> {
    Response r = echo_response(req);
    if (body_of(req) == "big") r.chunks.emplace_back(FileSlice{handle, 0, 8 * 1024 * 1024});
    co_return r;
  });
  for (int i = 0; i < 3; ++i) {
    Client leaver(port());
    leaver.send(0, 1, "big");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // Closing with unread data resets the connection; the server's sendfile then fails.
  }
  Client c(port());
  c.send(0, 2, "small");
  auto r = c.receive_echo();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->first, 2);
  EXPECT_TRUE(test::eventually([&] { return server->connection_count() == 1; }));
}

TEST_F(ServerFixture, EnsureResidentOnFreshFile) {
  TempFile file(3 * 1024 * 1024);
  auto handle = file.open();
  const bool was_cold = !is_resident(handle->fd(), 0, file.content.size());
  if (!was_cold) std::cout << "[ note ] the kernel kept the file cached; cold path not exercised\n";
  auto resumed_on = run_sync<int>(reactors.executor(1), [&]() -> awaitable<int> {
    const FileSlice slice{handle, 4095, 2 * 1024 * 1024};  // named: see run_on.h on GCC 12
    co_await ensure_resident(blocking, slice);
    co_return current_shard();
  });
  EXPECT_EQ(resumed_on, 1);
  EXPECT_EQ(handle.use_count(), 1);
  EXPECT_TRUE(is_resident(handle->fd(), 4095, 2 * 1024 * 1024));
  // The data is unchanged.
  std::string back(100, '\0');
  ASSERT_EQ(::pread(handle->fd(), back.data(), back.size(), 4095), 100);
  EXPECT_EQ(back, file.content.substr(4095, 100));
}

TEST(Resident, EmptyAndUnmappableRanges) {
  EXPECT_TRUE(is_resident(-1, 0, 0));
  EXPECT_FALSE(is_resident(-1, 0, 4096));  // cannot tell: treated as cold
}

}  // namespace
}  // namespace brokerd::net::test
