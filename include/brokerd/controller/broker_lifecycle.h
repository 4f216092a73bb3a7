#pragma once
// The broker's side of membership: it registers with the active controller (the leader of
// the metadata quorum: over the controller listener, or in process when this node leads),
// heartbeats every broker.heartbeat.interval.ms with the metadata offset it has applied,
// and is served (unfenced) once caught up. At stop it asks to be fenced, so clients stop
// being sent to it before it goes. Runs on a thread of its own.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "brokerd/metadata/metadata_image.h"
#include "brokerd/controller/controller_client.h"
#include "brokerd/protocol/uuid.h"

namespace brokerd::metadata {
class MetadataStore;
}  // namespace brokerd::metadata
namespace brokerd::quorum {
class QuorumDriver;
}

namespace brokerd::controller {

class BrokerRegistry;

class BrokerLifecycle {
 public:
  // A registration refused as a duplicate is retried for twice the session timeout (the
  // refusal may be about this node's own previous process, whose session has to expire).
  BrokerLifecycle(metadata::MetadataStore& metadata, quorum::QuorumDriver& quorum, BrokerRegistry& local_controller,
                  metadata::BrokerInfo self, std::string listener, int64_t heartbeat_interval_ms,
                  int64_t session_timeout_ms);
  ~BrokerLifecycle();  // stop(false)
  BrokerLifecycle(const BrokerLifecycle&) = delete;
  BrokerLifecycle& operator=(const BrokerLifecycle&) = delete;

  // Whether this node's log dirs were shut down cleanly (KIP-966): a broker that was not may
  // have lost unflushed data, and says so when it registers. Call before start().
  void set_clean_shutdown(bool clean) { previous_epoch_ = clean ? 0 : -1; }
  void start();
  // Blocks until this broker is registered and unfenced, or `stop` says to give up (false).
  // Throws std::runtime_error when the controller refuses the registration for good (another
  // live process holds this node id).
  bool wait_until_unfenced(const std::function<bool()>& stop);
  // With `fence`, a last heartbeat asks the controller to fence this broker; then the thread
  // stops.
  void stop(bool fence = true);

  int64_t epoch() const { return epoch_.load(); }
  bool fenced() const { return fenced_.load(); }

 private:
  void run();
  void step(bool shutting_down);
  // Sends BrokerRegistration or BrokerHeartbeat to the active controller; false when it could
  // not be reached (no leader yet, connection failed).
  bool call(int16_t api_key, int16_t version, const Bytes& body, Bytes& response);

  metadata::MetadataStore& metadata_;
  quorum::QuorumDriver& quorum_;
  BrokerRegistry& local_controller_;
  metadata::BrokerInfo self_;
  std::string listener_;
  const int64_t heartbeat_interval_ms_;
  const int64_t session_timeout_ms_;
  int64_t refused_since_ms_ = -1;  // first of a run of duplicate refusals
  int64_t previous_epoch_ = 0;     // sent as PreviousBrokerEpoch: -1 after an unclean stop
  const protocol::Uuid incarnation_ = protocol::Uuid::random();
  ControllerClient client_;
  int64_t unauthorized_logged_ms_ = -1;  // when a CLUSTER_AUTHORIZATION_FAILED refusal was last logged
  std::atomic<int64_t> epoch_{-1};
  std::atomic<bool> fenced_{true};
  std::atomic<bool> refused_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace brokerd::controller
