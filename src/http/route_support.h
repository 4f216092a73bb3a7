#pragma once
// What every route of the /v1 API uses: the node as the routes see it, the query string, the
// fields of a JSON body with their types checked, and a topic's partitions as this node's
// Metadata answers them to the caller.
#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "brokerd/http/routes.h"
#include "brokerd/protocol/messages/metadata_response.h"
#include "http/errors.h"
#include "http/kafka_calls.h"

namespace brokerd::metadata { class MetadataStore; }

namespace brokerd::http {

class BasicAuthenticator;

// Kafka mutes the connection of a client over its quota; an HTTP client opens connections
// at will, so the wait is kept per principal: until it has passed, every request of the
// principal is answered 429.
class QuotaWaits {
 public:
  void wait(const std::string& principal, int32_t throttle_time_ms);
  // How long the principal must still wait; zero when it need not.
  std::chrono::milliseconds remaining(const std::string& principal);

 private:
  std::mutex mu_;
  std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> until_;
};

struct ApiContext {
  KafkaCalls& kafka;
  const metadata::MetadataStore& metadata;
  int32_t node_id;
  // A produce's and a forwarded call's bound; a long poll's wait is capped by it too.
  int64_t request_timeout_ms;
  // http.authentication=basic: every request names its user; nullptr: none, every request
  // acts as the connection's principal (User:ANONYMOUS).
  BasicAuthenticator* basic = nullptr;
  // http.authentication=mtls: every request acts as its connection's certificate principal.
  bool mtls = false;
  // An injected bug of test builds (http_api.h): base64 keys hashed as text.
  bool hash_encoded_key = false;
  QuotaWaits* quota_waits = nullptr;
};

// Versions of the Kafka requests the routes send (all served by this node).
inline constexpr int16_t kMetadataVersion = 12;
inline constexpr int16_t kProduceVersion = 9;
// Fetch before v11, which followers do not serve: a read sees the leader's high watermark.
inline constexpr int16_t kFetchVersion = 10;
inline constexpr int16_t kListOffsetsVersion = 7;
inline constexpr int16_t kCreateTopicsVersion = 7;
inline constexpr int16_t kFindCoordinatorVersion = 3;
inline constexpr int16_t kOffsetCommitVersion = 8;
inline constexpr int16_t kOffsetFetchVersion = 7;

// %XX decoded; nullopt when malformed.
std::optional<std::string> percent_decode(std::string_view text);

// The query string's parameters, decoded.
struct Query {
  std::map<std::string, std::string, std::less<>> params;
  // nullopt when absent; `error` set when present but not an integer in [min, max].
  std::optional<int64_t> integer(std::string_view name, int64_t min, int64_t max, std::string& error) const;
  std::optional<std::string_view> text(std::string_view name) const;
};
// nullopt when malformed.
std::optional<Query> parse_query(std::string_view query);

// The body as a JSON object, or the 400 reply that says why it is not one.
std::variant<boost::json::object, Reply> json_object_of(std::string_view body);

// Typed access to an object's fields; the first mistake is kept in `error` (then every later
// read returns nullopt) naming the field.
class Fields {
 public:
  Fields(const boost::json::object& o, std::string where) : o_(o), where_(std::move(where)) {}
  std::optional<std::string> text(std::string_view name, bool required = false);
  std::optional<int64_t> integer(std::string_view name, bool required = false, int64_t min = INT64_MIN,
                                 int64_t max = INT64_MAX);
  std::optional<bool> boolean(std::string_view name);
  const boost::json::value* raw(std::string_view name) const;
  bool failed() const { return !error.empty(); }
  void fail(std::string_view name, std::string_view why);
  std::string error;

 private:
  const boost::json::object& o_;
  std::string where_;
};

// `topic` as this node's Metadata answers the caller (DESCRIBE on the topic; no auto-creation),
// or the error reply (unknown topic 404, not authorized 403).
boost::asio::awaitable<std::variant<protocol::MetadataResponse::MetadataResponseTopic, Reply>> describe_topic(
    ApiContext& ctx, Call& call, const std::string& topic);

// The /v1 JSON shape of a topic: {"name", "id", "partitions": [{"partition", "leader", "replicas", "isr"}]}.
boost::json::object topic_json(const protocol::MetadataResponse::MetadataResponseTopic& t);

// A Kafka answer's throttle time: the write or read is done, and the principal's next
// requests are answered 429 until it has passed.
void mute_for(ApiContext& ctx, const net::ConnectionContext& connection, int32_t throttle_time_ms);

// A JSON reply with status 200 (or `status`).
Reply json_reply(const boost::json::value& v, unsigned status = 200);

}  // namespace brokerd::http
