#pragma once
// The OpenSSL side of TlsServerContext, for the connections of this module only.
#include <boost/asio/ssl/context.hpp>

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>

#include "brokerd/net/tls.h"

namespace brokerd::net {

class TlsContextImpl final : public TlsServerContext {
 public:
  explicit TlsContextImpl(TlsSettings settings);

  // The context a new connection handshakes with. When a file it was read from has changed
  // (checked at most once a second), it is read again; if that fails, the previous context
  // stays in use and the error is logged.
  std::shared_ptr<boost::asio::ssl::context> current();

 private:
  struct Stamp {
    std::filesystem::file_time_type mtime{};
    std::uintmax_t size = 0;
    bool operator==(const Stamp&) const = default;
  };
  std::shared_ptr<boost::asio::ssl::context> build() const;
  std::vector<Stamp> stamps() const;

  std::mutex mu_;
  std::shared_ptr<boost::asio::ssl::context> ctx_;
  std::vector<Stamp> stamps_;
  std::atomic<int64_t> next_check_ms_{0};
};

// The subject of the client's certificate in RFC 2253 form as Java writes it (subject_name.h),
// or nullopt when it sent none.
std::optional<std::string> peer_subject(SSL* ssl);

}  // namespace brokerd::net
