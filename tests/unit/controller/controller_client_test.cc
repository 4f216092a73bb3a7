#include "brokerd/controller/controller_client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>

namespace brokerd::controller {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// A listener on loopback that takes connections (the kernel's backlog) and never answers.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(fd_, 8) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      throw std::runtime_error("cannot listen on loopback");
    port_ = ntohs(a.sin_port);
  }
  ~SilentListener() { ::close(fd_); }
  quorum::Voter voter() const { return quorum::Voter{1, "127.0.0.1", port_}; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

TEST(ControllerClient, InterruptEndsACallInProgressAndEveryLaterOne) {
  SilentListener silent;
  ControllerClient client("test", 20'000);
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);
    client.interrupt();
  });
  const auto start = Clock::now();
  const auto got = client.call(silent.voter(), 18, 0, Bytes{});
  const double waited = seconds_since(start);
  stopper.join();
  EXPECT_FALSE(got);
  EXPECT_GE(waited, 0.15);
  EXPECT_LT(waited, 5.0);  // not the 20 s timeout

  const auto again = Clock::now();
  EXPECT_FALSE(client.call(silent.voter(), 18, 0, Bytes{}));
  EXPECT_LT(seconds_since(again), 1.0);
}

}  // namespace
}  // namespace brokerd::controller
