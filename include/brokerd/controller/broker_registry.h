#pragma once
// The controller's side of broker membership: BrokerRegistration and BrokerHeartbeat, and
// the sessions behind them. A broker registers (RegisterBrokerRecord, fenced, a new epoch),
// is unfenced by the first heartbeat that shows it has replayed the metadata up to its own
// registration, and is fenced again when it asks to shut down or when no heartbeat came for
// broker.session.timeout.ms. Only the node leading the metadata quorum answers; the others
// say NOT_CONTROLLER. Sessions live in memory: a new controller gives every registered
// broker a fresh session.
//
// Two signs cut a session short, to a grace of two heartbeat intervals (the configured one or
// the gap seen between the broker's last two heartbeats, whichever is longer; within it a live
// broker heartbeats again): the connection that carried a broker's heartbeats closed (a killed
// process's sockets close at once; a live broker reconnects at once), and, for a new
// controller, the broker of the node that led the quorum before it when that node's address
// refused connections before the election (its process is most likely gone; alive, it
// heartbeats to its successor within an interval). Silence counts only while the controller
// listens: time this node itself was stopped or starved (a gap between session checks) is
// credited to every session, so a controller resuming from a pause does not fence brokers
// whose heartbeats still wait unread in its sockets.
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "brokerd/protocol/messages/broker_heartbeat_request.h"
#include "brokerd/protocol/messages/broker_heartbeat_response.h"
#include "brokerd/protocol/messages/broker_registration_request.h"
#include "brokerd/protocol/messages/broker_registration_response.h"
#include "brokerd/protocol/uuid.h"

namespace brokerd::metadata {
class MetadataStore;
}  // namespace brokerd::metadata
namespace brokerd::net {
struct SessionState;
}
namespace brokerd::quorum {
class QuorumDriver;
}

namespace brokerd::controller {

class BrokerRegistry {
 public:
  BrokerRegistry(metadata::MetadataStore& metadata, quorum::QuorumDriver& quorum, int64_t session_timeout_ms,
                 int64_t heartbeat_interval_ms);
  ~BrokerRegistry();  // stop()
  BrokerRegistry(const BrokerRegistry&) = delete;
  BrokerRegistry& operator=(const BrokerRegistry&) = delete;

  // The session-expiry loop (a thread of its own; fencing commits to the quorum).
  void start();
  void stop();

  // Both block until what they change is committed: call them off the reactors.
  protocol::BrokerRegistrationResponse registration(const protocol::BrokerRegistrationRequest& req);
  protocol::BrokerHeartbeatResponse heartbeat(const protocol::BrokerHeartbeatRequest& req);
  // A heartbeat's answer when it needs no commit (the session is renewed either way), without
  // blocking; nullopt when the broker is to be fenced or unfenced: then heartbeat().
  std::optional<protocol::BrokerHeartbeatResponse> answer_at_once(const protocol::BrokerHeartbeatRequest& req);
  // For the connection `broker_id`'s heartbeats came on to hold (net::ConnectionContext::
  // close_watch): when the connection ends, that broker's session is cut to the grace.
  std::unique_ptr<net::SessionState> watch_connection(int32_t broker_id);

 private:
  struct Session {
    int64_t epoch = -1;
    protocol::Uuid incarnation;
    int64_t last_heartbeat_ms = 0;
    bool cut = false;  // cut to the grace (cut_session) since the last heartbeat
    int64_t gap_ms = 0;  // between the broker's last two heartbeats, 0 if unknown
  };
  // Connections that carried heartbeats and closed: (broker, when), for the check thread. Shared
  // with the watches, which may outlive the registry.
  struct ClosedConnections {
    std::mutex mu;
    std::vector<std::pair<int32_t, int64_t>> closed;
  };
  class ConnectionWatch;
  // The session expires a grace after `from`, unless a heartbeat came after `from`.
  void cut_session(Session& s, int64_t from) const;
  int64_t grace_of(const Session& s) const;
  // Renews `id`'s session with a heartbeat at `now` (mu_ held).
  void renew(int32_t id, int64_t epoch, const protocol::Uuid& incarnation, int64_t now);
  // Fresh sessions for every registered broker when this node became the controller.
  void take_over_if_new_epoch();
  void expire_sessions();
  // How much longer than its usual period the gap since the previous check was, when long
  // enough to be a stall of this node (else 0); the check thread's alone.
  int64_t stall_before(int64_t now);

  metadata::MetadataStore& metadata_;
  quorum::QuorumDriver& quorum_;
  const int64_t session_timeout_ms_;
  const int64_t grace_ms_;  // two configured heartbeat intervals, at most the session timeout
  std::mutex mu_;
  std::map<int32_t, Session> sessions_;
  int32_t sessions_epoch_ = -1;  // the quorum epoch the sessions belong to
  std::shared_ptr<ClosedConnections> closed_ = std::make_shared<ClosedConnections>();
  int64_t last_check_ms_ = -1;   // when expire_sessions last ran (the check thread's)
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace brokerd::controller
