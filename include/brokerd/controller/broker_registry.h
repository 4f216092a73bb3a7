#pragma once
// The controller's side of broker membership: BrokerRegistration and BrokerHeartbeat, and
// the sessions behind them. A broker registers (RegisterBrokerRecord, fenced, a new epoch),
// is unfenced by the first heartbeat that shows it has replayed the metadata up to its own
// registration, and is fenced again when it asks to shut down or when no heartbeat came for
// broker.session.timeout.ms. Only the node leading the metadata quorum answers; the others
// say NOT_CONTROLLER. Sessions live in memory: a new controller gives every registered
// broker a fresh session.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "brokerd/protocol/messages/broker_heartbeat_request.h"
#include "brokerd/protocol/messages/broker_heartbeat_response.h"
#include "brokerd/protocol/messages/broker_registration_request.h"
#include "brokerd/protocol/messages/broker_registration_response.h"
#include "brokerd/protocol/uuid.h"

namespace brokerd::cluster {
class MetadataStore;
}
namespace brokerd::quorum {
class QuorumDriver;
}

namespace brokerd::controller {

class BrokerRegistry {
 public:
  // `heartbeat_interval_ms`: broker.heartbeat.interval.ms, which bounds the grace after a
  // broker's heartbeat connection closes (connection_closed).
  BrokerRegistry(cluster::MetadataStore& metadata, quorum::QuorumDriver& quorum, int64_t session_timeout_ms,
                 int64_t heartbeat_interval_ms = 500);
  ~BrokerRegistry();  // stop()
  BrokerRegistry(const BrokerRegistry&) = delete;
  BrokerRegistry& operator=(const BrokerRegistry&) = delete;

  // The session-expiry loop (a thread of its own; fencing commits to the quorum).
  void start();
  void stop();

  // Both block until what they change is committed: call them off the reactors.
  protocol::BrokerRegistrationResponse registration(const protocol::BrokerRegistrationRequest& req);
  // `connection`: the id of the connection it came on (0: none, a call within this node).
  protocol::BrokerHeartbeatResponse heartbeat(const protocol::BrokerHeartbeatRequest& req, uint64_t connection = 0);
  // A connection closed. When a broker's heartbeats came on it, the broker most likely died
  // (its process ended and the kernel closed its sockets): unless it heartbeats again within
  // the grace (the larger of two heartbeat intervals and half the session timeout), it is
  // fenced then, rather than after the whole session timeout. A live broker that reconnected
  // loses nothing.
  void connection_closed(uint64_t connection);

 private:
  struct Session {
    int64_t epoch = -1;
    protocol::Uuid incarnation;
    int64_t last_heartbeat_ms = 0;
    int64_t connection_lost_ms = -1;  // its heartbeat connection closed then (-1: it did not)
  };
  // Fresh sessions for every registered broker when this node became the controller; the
  // previous controller's broker (most likely gone, or cut off) gets only the grace of a lost
  // connection.
  void take_over_if_new_epoch();
  void expire_sessions();

  cluster::MetadataStore& metadata_;
  quorum::QuorumDriver& quorum_;
  const int64_t session_timeout_ms_;
  const int64_t lost_connection_grace_ms_;
  std::mutex mu_;
  std::map<int32_t, Session> sessions_;
  std::map<uint64_t, int32_t> heartbeat_connections_;  // connection id -> broker
  int32_t sessions_epoch_ = -1;  // the quorum epoch the sessions belong to
  std::atomic<int32_t> last_leader_seen_{-1};  // the quorum leader while this node followed
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace brokerd::controller
