#include "brokerd/controller/broker_registry.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/net/request.h"
#include "brokerd/protocol/error_code.h"
#include "brokerd/quorum/quorum_driver.h"

namespace brokerd::controller {

using protocol::ErrorCode;

namespace {
constexpr int64_t kCheckPeriodMs = 100;  // how often sessions are checked
constexpr int64_t kStallMs = 500;        // a longer gap between checks is a stall of this node
}  // namespace

class BrokerRegistry::ConnectionWatch : public net::SessionState {
 public:
  ConnectionWatch(std::weak_ptr<ClosedConnections> to, int32_t broker_id) : to_(std::move(to)), broker_id_(broker_id) {}
  ~ConnectionWatch() override {
    auto to = to_.lock();
    if (!to) return;
    std::lock_guard lock(to->mu);
    to->closed.emplace_back(broker_id_, steady_clock_ms());
  }

 private:
  std::weak_ptr<ClosedConnections> to_;
  int32_t broker_id_;
};

BrokerRegistry::BrokerRegistry(metadata::MetadataStore& metadata, quorum::QuorumDriver& quorum, int64_t session_timeout_ms,
                               int64_t heartbeat_interval_ms)
    : metadata_(metadata),
      quorum_(quorum),
      session_timeout_ms_(session_timeout_ms),
      grace_ms_(heartbeat_interval_ms > session_timeout_ms / 2 ? session_timeout_ms : 2 * heartbeat_interval_ms) {}

BrokerRegistry::~BrokerRegistry() { stop(); }

std::unique_ptr<net::SessionState> BrokerRegistry::watch_connection(int32_t broker_id) {
  return std::make_unique<ConnectionWatch>(closed_, broker_id);
}

int64_t BrokerRegistry::grace_of(const Session& s) const {
  // A broker whose interval is longer than this node's setting is still given two of its own.
  return std::min(session_timeout_ms_, std::max(grace_ms_, 2 * s.gap_ms));
}

void BrokerRegistry::cut_session(Session& s, int64_t from) const {
  if (s.last_heartbeat_ms > from) return;
  s.last_heartbeat_ms = std::min(s.last_heartbeat_ms, from + grace_of(s) - session_timeout_ms_);
  s.cut = true;
}

void BrokerRegistry::renew(int32_t id, int64_t epoch, const protocol::Uuid& incarnation, int64_t now) {
  auto [it, fresh] = sessions_.try_emplace(id);
  Session& s = it->second;
  // A cut or a stall credit moved the last heartbeat's time: then the gap is not known anew.
  const bool measurable = !fresh && !s.cut && s.epoch == epoch && s.last_heartbeat_ms > 0;
  const int64_t gap = measurable ? now - s.last_heartbeat_ms : s.gap_ms;
  s = Session{epoch, incarnation, now, false, gap};
}

void BrokerRegistry::take_over_if_new_epoch() {
  const auto status = quorum_.status();
  std::lock_guard lock(mu_);
  if (status.epoch == sessions_epoch_) return;
  sessions_epoch_ = status.epoch;
  sessions_.clear();
  const int64_t now = steady_clock_ms();
  for (const auto& b : metadata_.image()->brokers) sessions_[b.node_id] = Session{b.epoch, b.incarnation, now};
  // The node that led before this one refused connections: its process most likely died, so
  // its broker gets the grace, not a whole session.
  if (auto it = sessions_.find(status.refused_predecessor); it != sessions_.end()) {
    cut_session(it->second, now);
    module_logger("controller")->info(
        "broker {} led the metadata quorum before this node and refused connections: it has {} ms to heartbeat",
        it->first, grace_of(it->second));
  }
}

protocol::BrokerRegistrationResponse BrokerRegistry::registration(const protocol::BrokerRegistrationRequest& req) {
  protocol::BrokerRegistrationResponse resp;
  auto refuse = [&](ErrorCode e) {
    resp.error_code = protocol::code(e);
    resp.broker_epoch = -1;
    return resp;
  };
  if (!metadata_.leads()) return refuse(ErrorCode::not_controller);
  take_over_if_new_epoch();
  auto image = metadata_.image();
  if (req.cluster_id != image->cluster_id && !req.cluster_id.empty()) {
    module_logger("controller")->warn("broker {} registers with cluster id {}, this cluster is {}", req.broker_id,
                                      req.cluster_id, image->cluster_id);
  }
  {
    // Another live process already holds this node id: refuse the newcomer.
    std::lock_guard lock(mu_);
    auto it = sessions_.find(req.broker_id);
    const metadata::BrokerInfo* existing = image->broker(req.broker_id);
    if (it != sessions_.end() && existing && !existing->fenced && it->second.incarnation != req.incarnation_id &&
        steady_clock_ms() - it->second.last_heartbeat_ms < session_timeout_ms_) {
      module_logger("controller")->warn("refused a second registration of broker {}: another process holds that id",
                                        req.broker_id);
      return refuse(ErrorCode::duplicate_broker_registration);
    }
  }
  metadata::BrokerInfo b;
  b.node_id = req.broker_id;
  b.incarnation = req.incarnation_id;
  b.rack = req.rack.value_or("");
  std::string listener = "PLAINTEXT";
  if (!req.listeners.empty()) {
    b.host = req.listeners[0].host;
    b.port = req.listeners[0].port;
    listener = req.listeners[0].name;
  }
  for (const auto& l : req.listeners)
    b.endpoints.push_back(metadata::BrokerEndpoint{l.name, l.host, l.port, l.security_protocol});
  // KIP-966: a broker that did not stop cleanly sends no previous epoch.
  auto [err, epoch] = metadata_.register_broker(b, listener, req.previous_broker_epoch >= 0);
  if (err != ErrorCode::none) return refuse(err);
  std::lock_guard lock(mu_);
  sessions_[req.broker_id] = Session{epoch, req.incarnation_id, steady_clock_ms()};
  resp.broker_epoch = epoch;
  return resp;
}

std::optional<protocol::BrokerHeartbeatResponse> BrokerRegistry::answer_at_once(
    const protocol::BrokerHeartbeatRequest& req) {
  protocol::BrokerHeartbeatResponse resp;
  resp.is_fenced = true;
  if (!metadata_.leads()) {
    resp.error_code = protocol::code(ErrorCode::not_controller);
    return resp;
  }
  take_over_if_new_epoch();
  auto image = metadata_.image();
  const metadata::BrokerInfo* b = image->broker(req.broker_id);
  if (!b) {
    resp.error_code = protocol::code(ErrorCode::broker_id_not_registered);
    return resp;
  }
  if (b->epoch != req.broker_epoch) {
    resp.error_code = protocol::code(ErrorCode::stale_broker_epoch);
    return resp;
  }
  {
    std::lock_guard lock(mu_);
    renew(req.broker_id, b->epoch, b->incarnation, steady_clock_ms());
  }
  // Caught up once it has replayed its own registration.
  resp.is_caught_up = req.current_metadata_offset >= b->epoch;
  const bool fence = req.want_shut_down || req.want_fence;
  if ((fence && !b->fenced) || (!fence && b->fenced && resp.is_caught_up)) return std::nullopt;
  resp.is_fenced = b->fenced;
  resp.should_shut_down = req.want_shut_down;
  return resp;
}

protocol::BrokerHeartbeatResponse BrokerRegistry::heartbeat(const protocol::BrokerHeartbeatRequest& req) {
  if (auto resp = answer_at_once(req)) return *resp;
  // A fence or an unfence to commit. The image is read again: it may have moved meanwhile.
  protocol::BrokerHeartbeatResponse resp;
  resp.is_fenced = true;
  auto image = metadata_.image();
  const metadata::BrokerInfo* b = image->broker(req.broker_id);
  if (!b || b->epoch != req.broker_epoch) {
    resp.error_code = protocol::code(b ? ErrorCode::stale_broker_epoch : ErrorCode::broker_id_not_registered);
    return resp;
  }
  resp.is_caught_up = req.current_metadata_offset >= b->epoch;
  bool fenced = b->fenced;
  if (req.want_shut_down || req.want_fence) {
    if (!fenced) {
      // Bounded: a stopping broker must not wait on a quorum that is stopping too.
      const ErrorCode e = metadata_.set_broker_fenced(req.broker_id, b->epoch, true, std::chrono::seconds(2));
      if (e != ErrorCode::none) resp.error_code = protocol::code(e);
    }
    fenced = true;
  } else if (fenced && resp.is_caught_up) {
    const ErrorCode e = metadata_.set_broker_fenced(req.broker_id, b->epoch, false);
    if (e == ErrorCode::none) fenced = false;
    else resp.error_code = protocol::code(e);
  }
  resp.is_fenced = fenced;
  resp.should_shut_down = req.want_shut_down;
  return resp;
}

void BrokerRegistry::expire_sessions() {
  const int64_t now = steady_clock_ms();
  const int64_t stalled = stall_before(now);
  std::vector<std::pair<int32_t, int64_t>> closed;
  {
    std::lock_guard lock(closed_->mu);
    closed.swap(closed_->closed);
  }
  if (!metadata_.leads()) return;
  take_over_if_new_epoch();
  auto image = metadata_.image();
  struct Expired {
    int32_t id;
    int64_t epoch;
    bool cut;
    int64_t grace;
  };
  std::vector<Expired> expired;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, at] : closed) {
      if (auto it = sessions_.find(id); it != sessions_.end()) cut_session(it->second, at);
    }
    if (stalled > 0) {
      module_logger("controller")->warn(
          "broker sessions went unchecked for {} ms (this node was stopped or starved): every broker is credited "
          "with that time",
          stalled + kCheckPeriodMs);
      // Never past now: a session the take-over just began stays as it is.
      for (auto& [_, s] : sessions_) s.last_heartbeat_ms = std::min(now, s.last_heartbeat_ms + stalled);
    }
    for (const auto& b : image->brokers) {
      if (b.fenced) continue;
      auto it = sessions_.find(b.node_id);
      if (it == sessions_.end()) {
        sessions_[b.node_id] = Session{b.epoch, b.incarnation, now};
      } else if (now - it->second.last_heartbeat_ms > session_timeout_ms_) {
        expired.push_back(Expired{b.node_id, b.epoch, it->second.cut, grace_of(it->second)});
      }
    }
  }
  for (const auto& e : expired) {
    if (e.cut) {
      module_logger("controller")->warn(
          "broker {} sent no heartbeat within {} ms of losing its connection (or its node's lead of the quorum): "
          "fencing it",
          e.id, e.grace);
    } else {
      module_logger("controller")->warn("broker {} sent no heartbeat for {} ms: fencing it", e.id, session_timeout_ms_);
    }
    metadata_.set_broker_fenced(e.id, e.epoch, true);
  }
}

int64_t BrokerRegistry::stall_before(int64_t now) {
  const int64_t gap = last_check_ms_ < 0 ? 0 : now - last_check_ms_;
  last_check_ms_ = now;
  return gap > kStallMs ? gap - kCheckPeriodMs : 0;
}

void BrokerRegistry::start() {
  thread_ = std::thread([this] {
    std::unique_lock lock(stop_mu_);
    while (!stopping_) {
      lock.unlock();
      try {
        expire_sessions();
      } catch (const std::exception& e) {
        module_logger("controller")->error("broker session check failed: {}", e.what());
      }
      lock.lock();
      stop_cv_.wait_for(lock, std::chrono::milliseconds(kCheckPeriodMs), [this] { return stopping_; });
    }
  });
}

void BrokerRegistry::stop() {
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace brokerd::controller
