#include "brokerd/controller/broker_lifecycle.h"

#include <chrono>
#include <stdexcept>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/controller/broker_registry.h"
#include "brokerd/protocol/error_code.h"
#include "brokerd/protocol/framing.h"
#include "brokerd/protocol/messages/broker_heartbeat_request.h"
#include "brokerd/protocol/messages/broker_heartbeat_response.h"
#include "brokerd/protocol/messages/broker_registration_request.h"
#include "brokerd/protocol/messages/broker_registration_response.h"
#include "brokerd/quorum/quorum_driver.h"

namespace brokerd::controller {

namespace {

using protocol::ErrorCode;
constexpr int16_t kRegistrationVersion = 3, kHeartbeatVersion = 1;

template <typename Msg>
std::optional<Msg> decode(const Bytes& body, int16_t version) {
  try {
    protocol::Reader r(body);
    Msg m;
    m.decode(r, version);
    return m;
  } catch (const protocol::DecodeError&) {
    return std::nullopt;
  }
}

}  // namespace

BrokerLifecycle::BrokerLifecycle(metadata::MetadataStore& metadata, quorum::QuorumDriver& quorum,
                                 BrokerRegistry& local_controller, metadata::BrokerInfo self, std::string listener,
                                 int64_t heartbeat_interval_ms, int64_t session_timeout_ms)
    : metadata_(metadata),
      quorum_(quorum),
      local_controller_(local_controller),
      self_(std::move(self)),
      listener_(std::move(listener)),
      heartbeat_interval_ms_(heartbeat_interval_ms),
      session_timeout_ms_(session_timeout_ms),
      client_("brokerd-broker-" + std::to_string(self_.node_id), static_cast<int>(heartbeat_interval_ms * 2 + 500),
              quorum.options().credentials) {}

BrokerLifecycle::~BrokerLifecycle() { stop(false); }

bool BrokerLifecycle::call(int16_t api_key, int16_t version, const Bytes& body, Bytes& response) {
  const auto status = quorum_.status();
  if (status.leader_id < 0) return false;
  if (status.leader_id == self_.node_id) {
    // This node is the controller: no network in between.
    if (api_key == protocol::BrokerRegistrationRequest::api_key) {
      auto req = decode<protocol::BrokerRegistrationRequest>(body, version);
      response = protocol::encode_body(local_controller_.registration(*req), version);
    } else {
      auto req = decode<protocol::BrokerHeartbeatRequest>(body, version);
      response = protocol::encode_body(local_controller_.heartbeat(*req), version);
    }
    return true;
  }
  for (const auto& v : quorum_.options().voters) {
    if (v.id != status.leader_id) continue;
    // A kept connection the controller closed meanwhile fails at once (not by timing out): try
    // again at once on a new one, since the controller may have cut this broker's session to a
    // short grace when it saw the close. Registrations and heartbeats can be repeated.
    const bool kept = client_.connected();
    const int64_t sent_at = steady_clock_ms();
    auto got = client_.call(v, api_key, version, body);
    if (!got && kept && steady_clock_ms() - sent_at < heartbeat_interval_ms_) got = client_.call(v, api_key, version, body);
    if (!got) return false;
    response.assign(got->data.begin(), got->data.end());
    return true;
  }
  return false;
}

void BrokerLifecycle::step(bool shutting_down) {
  auto log = module_logger("controller");
  Bytes response;
  if (epoch_.load() < 0) {
    if (shutting_down) return;
    protocol::BrokerRegistrationRequest req;
    req.broker_id = self_.node_id;
    req.cluster_id = metadata_.image()->cluster_id;
    req.incarnation_id = incarnation_;
    // The inter-broker listener first; the other client listeners after it.
    auto& l = req.listeners.emplace_back();
    l.name = listener_;
    l.host = self_.host;
    l.port = static_cast<uint16_t>(self_.port);
    l.security_protocol = 0;
    for (const auto& e : self_.endpoints)
      if (e.listener == listener_) l.security_protocol = e.security_protocol;
    for (const auto& e : self_.endpoints) {
      if (e.listener == listener_) continue;
      auto& other = req.listeners.emplace_back();
      other.name = e.listener;
      other.host = e.host;
      other.port = static_cast<uint16_t>(e.port);
      other.security_protocol = e.security_protocol;
    }
    req.rack = self_.rack.empty() ? std::nullopt : std::optional<std::string>(self_.rack);
    req.previous_broker_epoch = previous_epoch_;
    if (!call(req.api_key, kRegistrationVersion, protocol::encode_body(req, kRegistrationVersion), response)) return;
    auto resp = decode<protocol::BrokerRegistrationResponse>(response, kRegistrationVersion);
    if (!resp) return;
    if (resp->error_code == protocol::code(ErrorCode::duplicate_broker_registration)) {
      const int64_t now = steady_clock_ms();
      if (refused_since_ms_ < 0) {
        refused_since_ms_ = now;
        log->warn("node {} is still registered by an earlier process; waiting for its session to expire",
                  self_.node_id);
      } else if (now - refused_since_ms_ > 2 * session_timeout_ms_) {
        log->error("the controller refused this broker's registration: another live process is node {}",
                   self_.node_id);
        refused_ = true;
        cv_.notify_all();
      }
      return;
    }
    refused_since_ms_ = -1;
    if (resp->error_code == protocol::code(ErrorCode::cluster_authorization_failed)) {
      const int64_t now = steady_clock_ms();
      if (unauthorized_logged_ms_ < 0 || now - unauthorized_logged_ms_ > 60'000) {
        log->error("the controller refused this broker's registration (CLUSTER_AUTHORIZATION_FAILED): the principal "
                   "it authenticates as on the controller listener needs CLUSTER_ACTION on the cluster, or to be one "
                   "of super.users; retrying");
        unauthorized_logged_ms_ = now;
      }
      return;
    }
    if (resp->error_code != 0) return;  // NOT_CONTROLLER and the like: try again
    epoch_ = resp->broker_epoch;
    previous_epoch_ = resp->broker_epoch;  // a later registration by this process lost nothing
    log->info("registered with the controller as broker {} (epoch {})", self_.node_id, resp->broker_epoch);
  }
  protocol::BrokerHeartbeatRequest hb;
  hb.broker_id = self_.node_id;
  hb.broker_epoch = epoch_.load();
  hb.current_metadata_offset = metadata_.image()->offset;
  hb.want_shut_down = shutting_down;
  if (!call(hb.api_key, kHeartbeatVersion, protocol::encode_body(hb, kHeartbeatVersion), response)) return;
  auto resp = decode<protocol::BrokerHeartbeatResponse>(response, kHeartbeatVersion);
  if (!resp) return;
  if (resp->error_code == protocol::code(ErrorCode::stale_broker_epoch) ||
      resp->error_code == protocol::code(ErrorCode::broker_id_not_registered)) {
    epoch_ = -1;  // register again
    fenced_ = true;
    return;
  }
  if (resp->error_code != 0) return;
  const bool was_fenced = fenced_.exchange(resp->is_fenced);
  if (was_fenced && !resp->is_fenced) log->info("broker {} is unfenced", self_.node_id);
  cv_.notify_all();
}

void BrokerLifecycle::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    try {
      step(false);
    } catch (const std::exception& e) {
      module_logger("controller")->warn("broker heartbeat failed: {}", e.what());
    }
    lock.lock();
    // Quick retries until registered and unfenced, then the heartbeat interval.
    const int64_t wait = fenced_.load() ? std::min<int64_t>(heartbeat_interval_ms_, 50) : heartbeat_interval_ms_;
    cv_.wait_for(lock, std::chrono::milliseconds(wait), [this] { return stopping_; });
  }
}

void BrokerLifecycle::start() {
  thread_ = std::thread([this] { run(); });
}

bool BrokerLifecycle::wait_until_unfenced(const std::function<bool()>& stop) {
  // Unfenced by the controller, and this node's own image says so too (the record replayed).
  auto unfenced_here = [this] {
    const metadata::BrokerInfo* b = metadata_.image()->broker(self_.node_id);
    return b && !b->fenced && b->epoch == epoch_.load();
  };
  while (fenced_.load() || !unfenced_here()) {
    if (refused_.load()) throw std::runtime_error("node " + std::to_string(self_.node_id) +
                                                  " is already registered by another live process");
    if (stop()) return false;
  }
  return true;
}

void BrokerLifecycle::stop(bool fence) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (fence && epoch_.load() >= 0) {
    try {
      step(true);  // controlled shutdown: the controller fences this broker now
    } catch (const std::exception& e) {
      module_logger("controller")->warn("could not tell the controller this broker stops: {}", e.what());
    }
  }
}

}  // namespace brokerd::controller
