#include "brokerctl/client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace brokerctl {

using brokerd::Bytes;

Endpoint parse_endpoint(const std::string& text) {
  Endpoint e;
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    throw UsageError("bootstrap server must be HOST:PORT, got '" + text + "'");
  }
  e.host = text.substr(0, colon);
  if (e.host.size() > 2 && e.host.front() == '[' && e.host.back() == ']') e.host = e.host.substr(1, e.host.size() - 2);
  auto port = parse_int(std::string_view(text).substr(colon + 1), 1, 65535);
  if (!port) throw UsageError("bootstrap server must be HOST:PORT with a port in 1..65535, got '" + text + "'");
  e.port = static_cast<int>(*port);
  return e;
}

std::vector<Endpoint> parse_endpoints(const std::string& text) {
  std::vector<Endpoint> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string one = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!one.empty()) out.push_back(parse_endpoint(one));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.empty()) throw UsageError("bootstrap server must be HOST:PORT[,HOST:PORT...], got '" + text + "'");
  return out;
}

std::string describe_error(int16_t code, const std::optional<std::string>& message) {
  std::string name(proto::error_name(static_cast<proto::ErrorCode>(code)));
  if (name.empty()) name = "ERROR_" + std::to_string(code);
  if (message && !message->empty()) return name + ": " + *message;
  return name;
}

void check_error(int16_t code, const std::string& what, const std::optional<std::string>& message) {
  if (code != 0) throw CommandError(what + ": " + describe_error(code, message));
}

std::string Connection::api_name(int16_t api_key) {
  const auto* info = proto::find_api(api_key);
  return info ? info->name : "API " + std::to_string(api_key);
}

Connection::Connection(Endpoint endpoint, int timeout_ms, const ClientSecurity& security)
    : endpoint_(std::move(endpoint)) {
  std::string error;
  stream_ = brokerd::net::ClientStream::connect(endpoint_.host, static_cast<uint16_t>(endpoint_.port), timeout_ms,
                                                security.tls, error);
  if (!stream_) throw CommandError(error);
  negotiate();
  if (security.enabled()) authenticate(*this, security);
}

Connection::~Connection() = default;

void Connection::write_all(const std::byte* p, size_t n) {
  if (!stream_->write_all(p, n)) throw CommandError(stream_->error());
}

void Connection::read_exact(std::byte* p, size_t n) {
  if (!stream_->read_exact(p, n)) throw CommandError(stream_->error());
}

Bytes Connection::roundtrip(const Bytes& frame) {
  write_all(frame.data(), frame.size());
  std::byte size_buf[4];
  read_exact(size_buf, 4);
  uint32_t size = (uint32_t(size_buf[0]) << 24) | (uint32_t(size_buf[1]) << 16) | (uint32_t(size_buf[2]) << 8) |
                  uint32_t(size_buf[3]);
  if (size > (1u << 30)) throw CommandError("response from " + endpoint_.to_string() + " is too large");
  Bytes body(size);
  read_exact(body.data(), size);
  return body;
}

Bytes Connection::call_raw(int16_t api_key, int16_t version, const Bytes& body) {
  proto::Writer w;
  proto::encode_request_header(w, api_key, version, ++correlation_, "brokerctl");
  w.raw(body);
  Bytes answer = roundtrip(proto::with_size_prefix(std::move(w).finish_bytes()));
  proto::Reader r(answer);
  try {
    if (proto::decode_response_header(r, api_key, version) != correlation_)
      throw proto::DecodeError("correlation id mismatch");
  } catch (const proto::DecodeError& e) {
    throw CommandError("malformed " + api_name(api_key) + " response from " + endpoint_.to_string() + ": " + e.what());
  }
  return Bytes(answer.end() - static_cast<ptrdiff_t>(r.remaining()), answer.end());
}

void Connection::negotiate() {
  // v3 first (it names the client); a broker that does not know v3 answers in v0 with
  // UNSUPPORTED_VERSION and its own range (KIP-511), and we ask again in v0.
  proto::ApiVersionsRequest req;
  req.client_software_name = "brokerctl";
  req.client_software_version = "0.1.0";
  proto::ApiVersionsResponse resp;
  try {
    resp = call_version<proto::ApiVersionsResponse>(req, int16_t{3});
  } catch (const CommandError&) {
    resp.error_code = proto::code(proto::ErrorCode::unsupported_version);
  }
  if (resp.error_code == proto::code(proto::ErrorCode::unsupported_version)) {
    resp = call_version<proto::ApiVersionsResponse>(req, int16_t{0});
  }
  check_error(resp.error_code, "ApiVersions to " + endpoint_.to_string());
  for (const auto& k : resp.api_keys) versions_[k.api_key] = {k.min_version, k.max_version};
}

int16_t Connection::pick_version(int16_t api_key, int16_t client_min, int16_t client_max) const {
  auto it = versions_.find(api_key);
  if (it == versions_.end()) {
    throw CommandError("the broker at " + endpoint_.to_string() + " does not support " + api_name(api_key) +
                       " (API key " + std::to_string(api_key) + ")");
  }
  auto [bmin, bmax] = it->second;
  int16_t v = std::min(bmax, client_max);
  if (v < std::max(bmin, client_min)) {
    throw CommandError("the broker at " + endpoint_.to_string() + " does not support a version of " +
                       api_name(api_key) + " this tool speaks (broker " + std::to_string(bmin) + "-" +
                       std::to_string(bmax) + ")");
  }
  return v;
}

Connection& Client::any() {
  if (bootstrap_conn_) return *bootstrap_conn_;
  for (size_t i = 0; i < bootstrap_.size(); ++i) {
    try {
      bootstrap_conn_ = std::make_unique<Connection>(bootstrap_[i], timeout_ms_, security_);
      return *bootstrap_conn_;
    } catch (const CommandError&) {
      if (i + 1 == bootstrap_.size()) throw;  // the last one's reason
    }
  }
  throw CommandError("no bootstrap server");
}

proto::MetadataResponse Client::metadata(const std::optional<std::vector<std::string>>& topics) {
  proto::MetadataRequest req;
  if (topics) {
    req.topics.emplace();
    for (const auto& t : *topics) {
      proto::MetadataRequest::MetadataRequestTopic rt;
      rt.name = t;
      req.topics->push_back(rt);
    }
  } else {
    req.topics = std::nullopt;
  }
  req.allow_auto_topic_creation = false;
  auto resp = any().call<proto::MetadataResponse>(req, int16_t(12));
  for (const auto& b : resp.brokers) brokers_[b.node_id] = Endpoint{b.host, b.port};
  return resp;
}

proto::MetadataResponse::MetadataResponseTopic Client::topic(const std::string& name) {
  auto md = metadata(std::vector<std::string>{name});
  for (auto& t : md.topics) {
    if (t.name && *t.name == name) {
      check_error(t.error_code, "topic '" + name + "'");
      return t;
    }
  }
  throw CommandError("topic '" + name + "': UNKNOWN_TOPIC_OR_PARTITION");
}

std::vector<int32_t> Client::node_ids() const {
  std::vector<int32_t> ids;
  for (const auto& [id, e] : brokers_) ids.push_back(id);
  return ids;
}

Connection& Client::node(int32_t node_id) {
  if (auto it = conns_.find(node_id); it != conns_.end()) return *it->second;
  if (!brokers_.count(node_id)) metadata(std::vector<std::string>{});
  auto b = brokers_.find(node_id);
  if (b == brokers_.end()) throw CommandError("broker " + std::to_string(node_id) + " is not in the cluster metadata");
  auto& conn = conns_[node_id];
  conn = std::make_unique<Connection>(b->second, timeout_ms_, security_);
  return *conn;
}

Connection& Client::coordinator(const std::string& key, int8_t key_type) {
  auto& conn = any();
  int16_t v = conn.pick_version(proto::FindCoordinatorRequest::api_key, 0, 6);
  proto::FindCoordinatorRequest req;
  req.key_type = key_type;
  if (v >= 4) req.coordinator_keys = {key};  // v4+ batches keys
  else req.key = key;
  const std::string what = (key_type == 1 ? "transactional id '" : "group '") + key + "'";
  // COORDINATOR_NOT_AVAILABLE is transient while the offsets (or transactions) topic is set up.
  for (int attempt = 0;; ++attempt) {
    auto resp = conn.call_version<proto::FindCoordinatorResponse>(req, v);
    int16_t err = resp.error_code;
    std::optional<std::string> msg = resp.error_message;
    int32_t node = resp.node_id;
    std::string host = resp.host;
    int32_t port = resp.port;
    if (v >= 4) {
      if (resp.coordinators.empty()) throw CommandError("FindCoordinator returned no coordinator for " + what);
      const auto& c = resp.coordinators.front();
      err = c.error_code, msg = c.error_message, node = c.node_id, host = c.host, port = c.port;
    }
    bool transient = err == proto::code(proto::ErrorCode::coordinator_not_available) ||
                     err == proto::code(proto::ErrorCode::coordinator_load_in_progress);
    if (transient && attempt < 50) {
      ::usleep(100 * 1000);
      continue;
    }
    check_error(err, "finding the coordinator of " + what, msg);
    if (!brokers_.count(node)) brokers_[node] = Endpoint{host, port};
    return this->node(node);
  }
}

}  // namespace brokerctl
