#pragma once
// A raw Kafka protocol client for the integration tools (api_matrix, api_refusals): one
// blocking connection (authenticated with SASL when g_credentials are set), requests sent
// with the generated codecs at an exact version, answers decoded to the last byte. Every
// socket wait is bounded.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "brokerd/protocol/framing.h"
#include "brokerd/protocol/messages/api_table.h"
#include "brokerd/protocol/wire.h"
#include "brokerd/security/sasl_client.h"

namespace wire_client {

namespace bp = brokerd::protocol;
using brokerd::Bytes;

inline constexpr int kIoTimeoutMs = 15000;
inline std::string g_client_id = "api-matrix";
inline std::string g_host;
inline int g_port = 0;
inline int32_t g_correlation = 1000;
// Set: every new connection authenticates with SASL first.
inline brokerd::security::ClientCredentials g_credentials;

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Conn {
 public:
  Conn(const std::string& host, int port) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 || !res) {
      throw Failure("cannot resolve " + host);
    }
    fd_ = ::socket(res->ai_family, res->ai_socktype, res->ai_protocol);
    if (fd_ < 0) {
      freeaddrinfo(res);
      throw Failure("socket: " + std::string(strerror(errno)));
    }
    timeval tv{kIoTimeoutMs / 1000, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    int rc = ::connect(fd_, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    if (rc != 0) throw Failure("connect: " + std::string(strerror(errno)));
    if (g_credentials.enabled()) authenticate();
  }
  ~Conn() {
    if (fd_ >= 0) ::close(fd_);
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  void send_all(const Bytes& b) {
    size_t off = 0;
    while (off < b.size()) {
      ssize_t n = ::send(fd_, b.data() + off, b.size() - off, MSG_NOSIGNAL);
      if (n <= 0) throw Failure("send failed: " + std::string(n == 0 ? "closed" : strerror(errno)));
      off += static_cast<size_t>(n);
    }
  }

  // One response frame without its size prefix.
  Bytes recv_frame() {
    std::byte size_buf[4];
    recv_exact(size_buf, 4, "size");
    uint32_t n = (uint32_t(size_buf[0]) << 24) | (uint32_t(size_buf[1]) << 16) |
                 (uint32_t(size_buf[2]) << 8) | uint32_t(size_buf[3]);
    if (n > (64u << 20)) throw Failure("response size " + std::to_string(n) + " is implausible");
    Bytes body(n);
    recv_exact(body.data(), n, "body");
    return body;
  }

 private:
  // SaslHandshake and SaslAuthenticate with g_credentials.
  void authenticate() {
    auto call = [this](int16_t api_key, int16_t version, const Bytes& body) -> std::optional<Bytes> {
      bp::Writer w;
      const int32_t corr = ++g_correlation;
      bp::encode_request_header(w, api_key, version, corr, g_client_id);
      w.raw(body);
      send_all(bp::with_size_prefix(std::move(w).finish_bytes()));
      Bytes frame = recv_frame();
      bp::Reader r(frame);
      if (bp::decode_response_header(r, api_key, version) != corr) throw Failure("SASL answer out of order");
      return Bytes(frame.end() - static_cast<ptrdiff_t>(r.remaining()), frame.end());
    };
    if (auto refused = brokerd::security::authenticate(g_credentials, call)) throw Failure("SASL: " + *refused);
  }

  void recv_exact(std::byte* p, size_t n, const char* what) {
    size_t got = 0;
    while (got < n) {
      ssize_t r = ::recv(fd_, p + got, n - got, 0);
      if (r == 0) throw Failure(std::string("connection closed by the broker while reading the response ") + what);
      if (r < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          throw Failure(std::string("no response within ") + std::to_string(kIoTimeoutMs) + " ms (" + what + ")");
        }
        throw Failure(std::string("recv: ") + strerror(errno));
      }
      got += static_cast<size_t>(r);
    }
  }
  int fd_ = -1;
};


// Sends req at version v and returns the decoded response, checking correlation id, header
// version and that the codec consumed the whole body.
template <class Resp, class Req>
inline Resp exchange(Conn& c, const Req& req, int16_t v) {
  static_assert(Req::api_key == Resp::api_key);
  int32_t corr = ++g_correlation;
  Bytes frame;
  try {
    frame = bp::encode_request(req, v, corr, g_client_id);
  } catch (const std::exception& e) {
    throw Failure(std::string("test bug: request does not encode: ") + e.what());
  }
  c.send_all(frame);
  Bytes body = c.recv_frame();
  bp::Reader r(std::span<const std::byte>(body.data(), body.size()));
  Resp resp;
  // The response header version is derived here from the codec's own flexibility, not from
  // the api table the broker uses: ApiVersions is always header v0, else v1 iff flexible.
  bool flexible_header = Req::api_key != 18 && Resp::is_flexible(v);
  try {
    int32_t got_corr = r.i32();
    if (got_corr != corr) {
      throw Failure("correlation id " + std::to_string(got_corr) + ", expected " + std::to_string(corr));
    }
    if (flexible_header) {
      std::vector<bp::TaggedField> ignored;
      r.tagged_fields(ignored, [](uint32_t, bp::Reader&) { return false; });
    }
    resp.decode(r, v);
  } catch (const Failure&) {
    throw;
  } catch (const std::exception& e) {
    throw Failure(std::string("response (") + std::to_string(body.size()) + " bytes, header v" +
                  (flexible_header ? "1" : "0") + ") does not decode: " + e.what());
  }
  if (r.remaining() != 0) {
    throw Failure(std::to_string(r.remaining()) + " bytes left after decoding the response (header v" +
                  (flexible_header ? "1" : "0") + ")");
  }
  return resp;
}

template <class Resp, class Req>
Resp exchange_new(const Req& req, int16_t v) {
  Conn c(g_host, g_port);
  return exchange<Resp>(c, req, v);
}

inline const char* api_name(int16_t key) {
  const auto* info = bp::find_api(key);
  return info ? info->name : "?";
}

inline void expect(bool ok, const std::string& what) {
  if (!ok) throw Failure(what);
}

}  // namespace wire_client
