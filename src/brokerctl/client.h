#pragma once
// A blocking Kafka client: one TCP (or TLS) connection per broker, one request at a time,
// every read and write bounded by a timeout. Each connection negotiates versions with ApiVersions
// and uses, per API, the highest version both sides support.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "brokerctl/args.h"
#include "brokerctl/security.h"
#include "brokerd/protocol/error_code.h"
#include "brokerd/protocol/framing.h"
#include "brokerd/protocol/messages/api_table.h"

namespace brokerctl {

namespace proto = brokerd::protocol;

struct Endpoint {
  std::string host;
  int port = 0;
  std::string to_string() const { return host + ":" + std::to_string(port); }
};

// "host:port" (or "[v6]:port"); a usage error when malformed.
Endpoint parse_endpoint(const std::string& text);
// A comma-separated list of HOST:PORT (Kafka's bootstrap.servers).
std::vector<Endpoint> parse_endpoints(const std::string& text);

// "UNKNOWN_TOPIC_OR_PARTITION: <message>" or just the name when the broker gave no message.
std::string describe_error(int16_t code, const std::optional<std::string>& message = std::nullopt);
// Throws CommandError "<what>: <error>" unless code is NONE.
void check_error(int16_t code, const std::string& what, const std::optional<std::string>& message = std::nullopt);

class Connection {
 public:
  // Connects (over TLS for SSL and SASL_SSL), negotiates versions and, for SASL_*, authenticates.
  Connection(Endpoint endpoint, int timeout_ms, const ClientSecurity& security = {});
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  const Endpoint& endpoint() const { return endpoint_; }
  bool supports(int16_t api_key) const { return versions_.count(api_key) > 0; }
  // The highest version within [client_min, client_max] the broker serves; throws
  // CommandError "the broker does not support <Api>" otherwise.
  int16_t pick_version(int16_t api_key, int16_t client_min, int16_t client_max) const;

  // Sends at exactly `version`.
  template <class Resp, class Req>
  Resp call_version(const Req& req, int16_t version) {
    brokerd::Bytes frame = proto::encode_request(req, version, ++correlation_, "brokerctl");
    brokerd::Bytes body = roundtrip(frame);
    proto::Reader r(body);
    Resp resp;
    try {
      int32_t cid = proto::decode_response_header(r, Req::api_key, version);
      if (cid != correlation_) throw proto::DecodeError("correlation id mismatch");
      resp.decode(r, version);
    } catch (const proto::DecodeError& e) {
      throw CommandError(std::string("malformed ") + api_name(Req::api_key) + " response from " +
                         endpoint_.to_string() + ": " + e.what());
    }
    return resp;
  }
  // Picks the version (capped at `client_max`) and calls.
  template <class Resp, class Req>
  Resp call(const Req& req, int16_t client_max = Req::max_version) {
    return call_version<Resp>(req, pick_version(Req::api_key, Req::min_version, client_max));
  }

  // Sends an encoded request body at `version`; the answer's body after its header.
  brokerd::Bytes call_raw(int16_t api_key, int16_t version, const brokerd::Bytes& body);

  static std::string api_name(int16_t api_key);

 private:
  void negotiate();
  brokerd::Bytes roundtrip(const brokerd::Bytes& frame);
  void write_all(const std::byte* p, size_t n);
  void read_exact(std::byte* p, size_t n);

  Endpoint endpoint_;
  std::unique_ptr<brokerd::net::ClientStream> stream_;
  int32_t correlation_ = 0;
  std::map<int16_t, std::pair<int16_t, int16_t>> versions_;  // api key -> broker's [min, max]
};

// The cluster as brokerctl sees it: the bootstrap connection, the brokers from Metadata,
// and a connection per broker opened on first use.
class Client {
 public:
  Client(std::vector<Endpoint> bootstrap, int timeout_ms, ClientSecurity security = {})
      : bootstrap_(std::move(bootstrap)), timeout_ms_(timeout_ms), security_(std::move(security)) {}

  // The bootstrap connection: to the first of the bootstrap servers that answers.
  Connection& any();
  Connection& node(int32_t node_id);
  // Metadata for the named topics (all topics when nullopt); learns the brokers.
  proto::MetadataResponse metadata(const std::optional<std::vector<std::string>>& topics);
  // Metadata of one topic; CommandError when it does not exist.
  proto::MetadataResponse::MetadataResponseTopic topic(const std::string& name);
  // The coordinator of a consumer group (key type 0) or of a transactional id (key type 1),
  // found with FindCoordinator.
  Connection& coordinator(const std::string& key, int8_t key_type = 0);
  std::vector<int32_t> node_ids() const;

 private:
  std::vector<Endpoint> bootstrap_;
  int timeout_ms_;
  ClientSecurity security_;
  std::unique_ptr<Connection> bootstrap_conn_;
  std::map<int32_t, Endpoint> brokers_;
  std::map<int32_t, std::unique_ptr<Connection>> conns_;
};

}  // namespace brokerctl
