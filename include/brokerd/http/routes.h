#pragma once
// What the HTTP server hands to the API and gets back: a request reduced to its method,
// target, body and the connection it came on, and a reply. No HTTP library type crosses
// this line, so the routes compile without Beast.
#include <boost/asio/awaitable.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace brokerd::net { struct ConnectionContext; }

namespace brokerd::http {

struct Call {
  std::string_view method;  // "GET", "POST", ...
  std::string_view target;  // path and query, as sent
  std::string_view body;
  std::string_view authorization;  // the Authorization header, empty when absent
  std::string_view content_type;
  // On an https connection whose client presented a certificate: the principal its subject
  // maps to (ssl.principal.mapping.rules); empty otherwise.
  std::string_view certificate_principal;
  // The connection's identity (principal, peer) and Kafka's per-connection state (a quota's mute).
  net::ConnectionContext& connection;
};

struct Reply {
  unsigned status = 200;
  std::string body;  // JSON unless content_type says otherwise
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // e.g. Retry-After, WWW-Authenticate
};

class Routes {
 public:
  virtual ~Routes() = default;
  // Never throws for bad input: that is a 4xx reply. Runs on the connection's shard.
  virtual boost::asio::awaitable<Reply> answer(Call& call) = 0;
};

}  // namespace brokerd::http
