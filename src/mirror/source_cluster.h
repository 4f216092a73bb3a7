#pragma once
// The source side of a mirror link: a blocking Kafka client of another cluster, spoken to
// with the public protocol only (so the source may be brokerd, Apache Kafka or Redpanda).
// One connection per source broker, reopened after a failure; every wait bounded.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "brokerd/common/bytes.h"
#include "brokerd/controller/controller_client.h"
#include "brokerd/protocol/uuid.h"
#include "brokerd/protocol/wire.h"
#include "brokerd/quorum/voters.h"
#include "brokerd/security/sasl_client.h"

namespace brokerd::mirror {

struct SourceTopic {
  std::string name;
  protocol::Uuid id;
  int16_t error = 0;
  std::vector<int32_t> leaders;  // by partition; -1 while one has none
};

struct SourceMetadata {
  std::map<int32_t, quorum::Voter> brokers;
  std::map<std::string, SourceTopic> topics;
};

// "host:port,host:port" as endpoints (ids -1, -2, ...: no broker id is known yet). Throws
// std::invalid_argument on a malformed entry.
std::vector<quorum::Voter> parse_bootstrap(const std::string& servers);

class SourceCluster {
 public:
  // With credentials, every connection to the source authenticates first.
  SourceCluster(const std::string& bootstrap, std::string client_id, int timeout_ms,
                security::ClientCredentials credentials = {});

  // Every topic of the source (Metadata v12), from the first bootstrap server or known broker
  // that answers; nullopt with `error` set when none did.
  std::optional<SourceMetadata> metadata(std::string& error);
  // One request to `to`; the decoded answer, or nullopt with `error` set.
  template <typename Resp, typename Req>
  std::optional<Resp> call(const quorum::Voter& to, int16_t version, const Req& req, std::string& error) {
    protocol::Writer w;
    req.encode(w, version);
    auto body = send(to, Req::api_key, version, std::move(w).finish_bytes(), error);
    if (!body) return std::nullopt;
    try {
      // Records in the answer alias its buffer rather than being copied out of it.
      protocol::Reader r(body->data, body->owner);
      Resp resp;
      resp.decode(r, version);
      return resp;
    } catch (const protocol::DecodeError& e) {
      error = "malformed answer from " + to.host + ":" + std::to_string(to.port) + ": " + e.what();
      drop(to);
      return std::nullopt;
    }
  }

 private:
  std::optional<SharedBytes> send(const quorum::Voter& to, int16_t api, int16_t version, const Bytes& body,
                                  std::string& error);
  void drop(const quorum::Voter& to);

  std::vector<quorum::Voter> bootstrap_;
  std::map<int32_t, quorum::Voter> known_;  // brokers of the last metadata
  std::string client_id_;
  int timeout_ms_;
  security::ClientCredentials credentials_;
  struct Channel {
    quorum::Voter endpoint;
    std::unique_ptr<controller::ControllerClient> client;
  };
  std::map<int32_t, Channel> channels_;
};

}  // namespace brokerd::mirror
