#pragma once
// A blocking client connection, plain TCP or TLS, for the requests this node makes itself
// (registration, forwarding, replica fetches, mirror sources) and for brokerctl. Every wait
// is bounded by the timeout (poll() on a non-blocking socket), and ends early once the
// optional wake descriptor turns readable (an owner stopping); failures are reported as text.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

struct ssl_st;

namespace brokerd::net {

// What a TLS client trusts and presents, as Kafka's client properties say it.
struct TlsClientSettings {
  std::string ca_file;       // PEM authorities the server must chain to; empty: the system's
  std::string cert_file;     // PEM certificate chain for mutual TLS; empty: none presented
  std::string key_file;      // its private key (may be the same file)
  std::string key_password;  // of an encrypted key
  bool verify_hostname = true;  // ssl.endpoint.identification.algorithm=https, Kafka's default
};

class ClientStream {
 public:
  // Connects to host:port and, with `tls`, completes the handshake; nullptr with `error` set
  // (naming the address) when that fails within timeout_ms. While `wake_fd` (if not -1) is
  // readable, every wait of the stream fails at once; the caller owns it and keeps it open.
  static std::unique_ptr<ClientStream> connect(const std::string& host, uint16_t port, int timeout_ms,
                                               const std::optional<TlsClientSettings>& tls, std::string& error,
                                               int wake_fd = -1);
  ~ClientStream();
  ClientStream(const ClientStream&) = delete;
  ClientStream& operator=(const ClientStream&) = delete;

  // False once the connection failed, timed out or was closed; error() says which.
  bool write_all(const std::byte* data, size_t size);
  bool read_exact(std::byte* data, size_t size);
  const std::string& error() const { return error_; }

 private:
  ClientStream(int fd, int timeout_ms, std::string peer, int wake_fd)
      : fd_(fd), timeout_ms_(timeout_ms), peer_(std::move(peer)), wake_fd_(wake_fd) {}
  bool handshake(const std::string& host, const TlsClientSettings& tls);
  // Waits for what a TLS call asked for (or for `events` on the plain socket).
  bool wait(short events);
  bool tls_retry(int rc, const char* what);

  int fd_;
  int timeout_ms_;
  std::string peer_;
  int wake_fd_;
  ssl_st* ssl_ = nullptr;
  std::string error_;
};

}  // namespace brokerd::net
