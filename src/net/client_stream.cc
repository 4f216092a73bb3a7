#include "brokerd/net/client_stream.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "openssl_errors.h"

namespace brokerd::net {

namespace {

bool is_ip_address(const std::string& host) {
  in6_addr a6;
  in_addr a4;
  return ::inet_pton(AF_INET, host.c_str(), &a4) == 1 || ::inet_pton(AF_INET6, host.c_str(), &a6) == 1;
}

int password_callback(char* buf, int size, int, void* userdata) {
  const auto* password = static_cast<const std::string*>(userdata);
  const int n = std::min<int>(size, static_cast<int>(password->size()));
  std::memcpy(buf, password->data(), static_cast<size_t>(n));
  return n;
}

enum class Waited { ready, timed_out, woken };

// Waits for `events` on `fd`, or for `wake_fd` (when not -1) to turn readable.
Waited wait_fd(int fd, short events, int timeout_ms, int wake_fd) {
  pollfd p[2] = {{fd, events, 0}, {wake_fd, POLLIN, 0}};
  for (;;) {
    const int rc = ::poll(p, wake_fd >= 0 ? 2 : 1, timeout_ms);
    if (rc > 0) return wake_fd >= 0 && p[1].revents ? Waited::woken : Waited::ready;
    if (rc == 0) return Waited::timed_out;
    if (errno != EINTR) return Waited::timed_out;
  }
}

}  // namespace

std::unique_ptr<ClientStream> ClientStream::connect(const std::string& host, uint16_t port, int timeout_ms,
                                                    const std::optional<TlsClientSettings>& tls, std::string& error,
                                                    int wake_fd) {
  const std::string peer = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res); rc != 0 || !res) {
    error = "cannot resolve " + host + ": " + ::gai_strerror(rc);
    return nullptr;
  }
  int fd = -1;
  error = "no address for " + host;
  for (addrinfo* a = res; a && fd < 0; a = a->ai_next) {
    const int s = ::socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0) continue;
    int err = 0;
    socklen_t len = sizeof err;
    if (::connect(s, a->ai_addr, a->ai_addrlen) == 0) {
      fd = s;
    } else if (errno != EINPROGRESS) {
      error = "cannot connect to " + peer + ": " + std::strerror(errno);
      ::close(s);
    } else if (const Waited w = wait_fd(s, POLLOUT, timeout_ms, wake_fd); w != Waited::ready) {
      error = "cannot connect to " + peer + ": " +
              (w == Waited::woken ? std::string("stopped") : "timed out after " + std::to_string(timeout_ms) + " ms");
      ::close(s);
      if (w == Waited::woken) break;  // no other address either
    } else if (::getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      error = "cannot connect to " + peer + ": " + std::strerror(err);
      ::close(s);
    } else {
      fd = s;
    }
  }
  ::freeaddrinfo(res);
  if (fd < 0) return nullptr;
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  std::unique_ptr<ClientStream> stream(new ClientStream(fd, timeout_ms, peer, wake_fd));
  if (tls && !stream->handshake(host, *tls)) {
    error = stream->error_;
    return nullptr;
  }
  error.clear();
  return stream;
}

ClientStream::~ClientStream() {
  if (ssl_) SSL_free(ssl_);
  if (fd_ >= 0) ::close(fd_);
}

bool ClientStream::wait(short events) {
  const Waited w = wait_fd(fd_, events, timeout_ms_, wake_fd_);
  if (w == Waited::ready) return true;
  error_ = w == Waited::woken ? "stopped waiting for " + peer_
                              : "no answer from " + peer_ + " within " + std::to_string(timeout_ms_) + " ms";
  return false;
}

bool ClientStream::tls_retry(int rc, const char* what) {
  switch (SSL_get_error(ssl_, rc)) {
    case SSL_ERROR_WANT_READ: return wait(POLLIN);
    case SSL_ERROR_WANT_WRITE: return wait(POLLOUT);
    case SSL_ERROR_ZERO_RETURN:
      error_ = peer_ + " closed the connection";
      return false;
    case SSL_ERROR_SYSCALL:
      error_ = std::string(what) + " " + peer_ + ": " + (errno ? std::strerror(errno) : "the connection was closed");
      ERR_clear_error();
      return false;
    default: {
      error_ = std::string(what) + " " + peer_ + ": " + openssl_errors();
      const long verify = SSL_get_verify_result(ssl_);
      if (verify != X509_V_OK) error_ += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
      return false;
    }
  }
}

bool ClientStream::handshake(const std::string& host, const TlsClientSettings& tls) {
  ERR_clear_error();
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  const bool trusted = tls.ca_file.empty() ? SSL_CTX_set_default_verify_paths(ctx.get()) == 1
                                           : SSL_CTX_load_verify_locations(ctx.get(), tls.ca_file.c_str(), nullptr) == 1;
  if (!trusted) {
    error_ = "TLS: cannot read the trusted certificates " + (tls.ca_file.empty() ? "of the system" : tls.ca_file) + ": " +
             openssl_errors();
    return false;
  }
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  if (!tls.cert_file.empty()) {
    SSL_CTX_set_default_passwd_cb(ctx.get(), password_callback);
    SSL_CTX_set_default_passwd_cb_userdata(ctx.get(), const_cast<std::string*>(&tls.key_password));
    const std::string& key = tls.key_file.empty() ? tls.cert_file : tls.key_file;
    if (SSL_CTX_use_certificate_chain_file(ctx.get(), tls.cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx.get(), key.c_str(), SSL_FILETYPE_PEM) != 1) {
      error_ = "TLS: cannot use the client certificate " + tls.cert_file + " and key " + key + ": " + openssl_errors();
      return false;
    }
  }
  ssl_ = SSL_new(ctx.get());  // holds its own reference to the context
  SSL_set_fd(ssl_, fd_);
  SSL_set_mode(ssl_, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  const bool ip = is_ip_address(host);
  if (!ip) SSL_set_tlsext_host_name(ssl_, host.c_str());
  if (tls.verify_hostname) {
    if (ip) X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), host.c_str());
    else SSL_set1_host(ssl_, host.c_str());
  }
  for (;;) {
    const int rc = SSL_connect(ssl_);
    if (rc == 1) return true;
    if (!tls_retry(rc, "TLS handshake with")) return false;
  }
}

bool ClientStream::write_all(const std::byte* data, size_t size) {
  while (size > 0) {
    if (ssl_) {
      const int n = SSL_write(ssl_, data, static_cast<int>(std::min<size_t>(size, 1 << 30)));
      if (n > 0) {
        data += n;
        size -= static_cast<size_t>(n);
      } else if (!tls_retry(n, "writing to")) {
        return false;
      }
      continue;
    }
    const ssize_t n = ::send(fd_, data, size, MSG_NOSIGNAL);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait(POLLOUT)) return false;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      error_ = "lost the connection to " + peer_ + ": " + std::strerror(errno);
      return false;
    }
  }
  return true;
}

bool ClientStream::read_exact(std::byte* data, size_t size) {
  while (size > 0) {
    if (ssl_) {
      const int n = SSL_read(ssl_, data, static_cast<int>(std::min<size_t>(size, 1 << 30)));
      if (n > 0) {
        data += n;
        size -= static_cast<size_t>(n);
      } else if (!tls_retry(n, "reading from")) {
        return false;
      }
      continue;
    }
    const ssize_t n = ::recv(fd_, data, size, 0);
    if (n > 0) {
      data += n;
      size -= static_cast<size_t>(n);
    } else if (n == 0) {
      error_ = peer_ + " closed the connection";
      return false;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait(POLLIN)) return false;
    } else if (errno != EINTR) {
      error_ = "lost the connection to " + peer_ + ": " + std::strerror(errno);
      return false;
    }
  }
  return true;
}

}  // namespace brokerd::net
