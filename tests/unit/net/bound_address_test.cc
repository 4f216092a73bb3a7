// Addresses bound ahead of their server: a taken port fails at once, naming the address;
// until the server listens, connections are refused; then the server serves on that socket.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

#include "brokerd/net/bound_address.h"
#include "server_fixture.h"

namespace brokerd::net::test {
namespace {

using boost::asio::awaitable;

// 0 when a TCP connection to 127.0.0.1:port is accepted, else the errno.
int connect_error(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  const int err = rc == 0 ? 0 : errno;
  ::close(fd);
  return err;
}

TEST(BoundAddress, APortSomeoneListensOnFailsNamingTheAddress) {
  BoundAddress first("127.0.0.1", 0, "PLAINTEXT");
  const uint16_t port = first.port();
  ASSERT_NE(port, 0);
  const int fd = first.release();
  ASSERT_EQ(::listen(fd, 4), 0);
  try {
    BoundAddress second("127.0.0.1", port, "PLAINTEXT");
    ADD_FAILURE() << "bound a port another socket listens on";
  } catch (const std::system_error& e) {
    EXPECT_EQ(e.code().value(), EADDRINUSE);
    EXPECT_NE(std::string(e.what()).find("cannot listen on 127.0.0.1:" + std::to_string(port) + " (PLAINTEXT)"),
              std::string::npos)
        << e.what();
  }
  ::close(fd);
}

TEST_F(ServerFixture, AServerListensOnTheAddressBoundAhead) {
  auto bound = std::make_shared<BoundAddress>("127.0.0.1", 0, "PLAINTEXT");
  const uint16_t port = bound->port();
  EXPECT_EQ(connect_error(port), ECONNREFUSED);  // bound, not listening: refused as if closed
  dispatcher = std::make_unique<FnDispatcher>([](Request req) -> awaitable<Response> { co_return echo_response(req); });
  Listener l{"PLAINTEXT", "127.0.0.1", port, SecurityProtocol::plaintext, nullptr, bound};
  server = std::make_unique<Server>(reactors, blocking, *dispatcher, std::vector<Listener>{l});
  server->start();
  EXPECT_EQ(server->port("PLAINTEXT"), port);
  Client c(port);
  c.send(18, 7, "hello");
  auto r = c.receive_echo();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->second, "hello");
}

}  // namespace
}  // namespace brokerd::net::test
