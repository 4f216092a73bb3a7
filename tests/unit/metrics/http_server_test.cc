#include "brokerd/metrics/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "brokerd/metrics/registry.h"

namespace brokerd::metrics {
namespace {

// One HTTP/1.0 GET over a blocking socket: the server closes after answering.
std::string get(uint16_t port, const std::string& path) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return "connect failed";
  }
  std::string req = "GET " + path + " HTTP/1.0\r\nHost: x\r\n\r\n";
  (void)::write(fd, req.data(), req.size());
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

TEST(HttpAddress, Parses) {
  auto a = parse_http_address("127.0.0.1:9644");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 9644);
  auto b = parse_http_address("[::1]:80");
  EXPECT_EQ(b.host, "::1");
  auto c = parse_http_address(":9644");
  EXPECT_EQ(c.host, "");
  EXPECT_THROW(parse_http_address("localhost"), std::invalid_argument);
  EXPECT_THROW(parse_http_address("h:99999"), std::invalid_argument);
  EXPECT_THROW(parse_http_address("h:x1"), std::invalid_argument);
}

TEST(HttpServer, ServesMetricsHealthAndReadiness) {
  Registry r(1);
  r.counter("hits_total", "Hits.").add(5);
  HttpServer s(r, {"127.0.0.1", 0});
  s.start();
  ASSERT_NE(s.port(), 0);

  auto metrics = get(s.port(), "/metrics");
  EXPECT_NE(metrics.find("HTTP/1.0 200"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("text/plain; version=0.0.4"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("\r\n\r\n# HELP hits_total Hits."), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("hits_total 5\n"), std::string::npos) << metrics;

  EXPECT_NE(get(s.port(), "/health").find("200 OK"), std::string::npos);
  EXPECT_NE(get(s.port(), "/ready").find("503"), std::string::npos);
  s.set_ready(true);
  EXPECT_NE(get(s.port(), "/ready").find("200 OK"), std::string::npos);
  EXPECT_NE(get(s.port(), "/nope").find("404"), std::string::npos);
  s.stop();
  EXPECT_FALSE(s.ready());
}

TEST(HttpServer, RefusesATakenPort) {
  Registry r(1);
  HttpServer a(r, {"127.0.0.1", 0});
  a.start();
  HttpServer b(r, {"127.0.0.1", a.port()});
  EXPECT_THROW(b.start(), std::system_error);
}

}  // namespace
}  // namespace brokerd::metrics
