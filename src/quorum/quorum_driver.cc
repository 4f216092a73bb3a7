#include "brokerd/quorum/quorum_driver.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdlib>
#include <future>
#include <map>
#include <random>
#include <thread>

#include "brokerd/common/clock.h"
#include "brokerd/common/logger.h"
#include "brokerd/net/run_on.h"
#include "brokerd/protocol/wire.h"
#include "brokerd/quorum/kraft_codec.h"
#include "brokerd/quorum/peer_client.h"
#include "brokerd/quorum/rate_limited_log.h"
#include "brokerd/raft/disk_log.h"
#include "brokerd/raft/disk_quorum_state.h"
#include "brokerd/raft/disk_snapshot_store.h"
#include "brokerd/raft/node.h"

namespace brokerd::quorum {

namespace asio = boost::asio;

namespace {

// The answer to a request the core did not answer (it always does today; this keeps an
// inbound request from waiting forever should that change).
raft::MessageBody unanswered(const raft::MessageBody& request) {
  constexpr auto e = raft::Errc::not_leader_or_follower;
  if (std::holds_alternative<raft::VoteRequest>(request))
    return raft::VoteResponse{e, raft::kNoReplica, 0, false, std::get<raft::VoteRequest>(request).pre_vote};
  if (std::holds_alternative<raft::BeginQuorumEpochRequest>(request)) return raft::BeginQuorumEpochResponse{e};
  if (std::holds_alternative<raft::EndQuorumEpochRequest>(request)) return raft::EndQuorumEpochResponse{e};
  if (std::holds_alternative<raft::FetchSnapshotRequest>(request)) {
    raft::FetchSnapshotResponse r;
    r.error = e;
    return r;
  }
  raft::FetchResponse f;
  f.error = e;
  return f;
}

}  // namespace

struct QuorumDriver::Impl : std::enable_shared_from_this<QuorumDriver::Impl> {
  using Guard = asio::executor_work_guard<asio::io_context::executor_type>;

  Impl(QuorumOptions o, QuorumListener* l) : options(std::move(o)), listener(l), guard(ctx.get_executor()), timer(ctx) {}

  QuorumOptions options;
  QuorumListener* listener;
  asio::io_context ctx{1};
  std::optional<Guard> guard;
  asio::steady_timer timer;
  std::thread thread;

  std::unique_ptr<raft::DiskRaftLog> log;
  std::unique_ptr<raft::DiskQuorumStateStore> quorum_state;
  std::unique_ptr<raft::DiskSnapshotStore> snapshots;
  std::unique_ptr<raft::RaftNode> node;
  std::map<raft::ReplicaId, std::unique_ptr<PeerClient>> peers;

  struct Proposal {
    raft::Epoch epoch = 0;
    std::promise<ProposeResult> done;
  };
  std::map<raft::Offset, Proposal> proposals;  // by offset, until applied
  bool fetched_from_leader = false;            // a fetch answered since start
  int64_t bytes_since_snapshot = 0;
  bool snapshot_running = false;
  std::thread snapshotter;  // serialises a snapshot; joined before the next one and at stop
  RateLimitedLog mismatch_log;

  int64_t next_inbound = 1;
  std::map<int64_t, raft::MessageBody> replies;  // answers to inbound requests, by correlation
  bool stopping = false;

  mutable std::mutex status_mu;
  QuorumStatus status;
  int64_t last_confirmed = -1;  // driver thread only

  // ---- driver thread only ----

  void drain() {
    for (int rounds = 0; rounds < 1000; ++rounds) {
      raft::RaftOutput out = node->take_output();
      const bool empty = out.messages.empty() && !out.flush_up_to && !out.load_snapshot && out.committed.empty();
      if (empty) break;
      if (out.load_snapshot && listener) {
        listener->load_snapshot(*out.load_snapshot);
        bytes_since_snapshot = 0;
      }
      if (!out.committed.empty()) {
        if (listener) listener->apply(out.committed);
        settle(out.committed);
        for (const auto& e : out.committed) bytes_since_snapshot += static_cast<int64_t>(e.payload.size());
        maybe_snapshot(out.committed.back().offset + 1);
      }
      for (auto& m : out.messages) route(std::move(m));
      if (out.flush_up_to) {
        log->flush(*out.flush_up_to);
        node->on_log_flushed(steady_clock_ms());
      }
    }
    publish_status();
  }

  // Once enough was applied since the last snapshot: the listener's state as of `end` is
  // serialised on a thread of its own (a large image takes a while, and this thread must keep
  // ticking), then saved here; the log below it goes.
  void maybe_snapshot(raft::Offset end) {
    if (!listener || snapshot_running || bytes_since_snapshot < options.snapshot_bytes) return;
    bytes_since_snapshot = 0;
    snapshot_running = true;
    if (snapshotter.joinable()) snapshotter.join();  // the previous one has posted its result
    // The thread is joined by stop() before this object goes; its result holds only a weak
    // reference, so one posted after the loop ended does not keep the driver alive.
    snapshotter = std::thread([this, weak = weak_from_this(), end, serialise = listener->snapshot()] {
      const auto started = steady_clock_ms();
      auto data = std::make_shared<std::string>(serialise());
      asio::post(ctx, [weak, end, data, started] {
        auto self = weak.lock();
        if (!self) return;
        self->snapshot_running = false;
        if (self->stopping) return;
        const size_t size = data->size();
        self->step([&] {
          if (self->node->take_snapshot(end, std::move(*data)))
            module_logger("quorum")->info("took a metadata snapshot at offset {} ({} bytes, {} ms)", end, size,
                                          steady_clock_ms() - started);
        });
      });
    });
  }

  // Proposals whose offsets were just applied: theirs if the epoch matches, else another
  // leader's entry took the offset.
  void settle(const std::vector<raft::Entry>& committed) {
    for (const auto& e : committed) {
      auto it = proposals.find(e.offset);
      if (it == proposals.end()) continue;
      ProposeResult r;
      r.offset = e.offset;
      r.ok = e.epoch == it->second.epoch;
      if (!r.ok) r.error = "leadership moved before the entry committed";
      it->second.done.set_value(std::move(r));
      proposals.erase(it);
    }
  }

  void fail_proposals(const char* why) {
    for (auto& [offset, p] : proposals) p.done.set_value(ProposeResult{false, offset, why});
    proposals.clear();
  }

  bool caught_up() const {
    if (node->applied_offset() < node->high_watermark()) return false;
    if (node->role() == raft::Role::leader) return node->high_watermark() > node->epoch_start_offset();
    return fetched_from_leader;
  }

  void route(raft::Message m) {
    if (raft::is_response(m.body)) {
      replies[m.correlation_id] = std::move(m.body);
      return;
    }
    auto it = peers.find(m.to);
    if (it == peers.end()) return;
    WireRequest req = encode_request(m.body, options.cluster_id);
    auto self = shared_from_this();
    const raft::ReplicaId to = m.to;
    const int64_t correlation = m.correlation_id;
    it->second->send(req.api_key, req.version, std::move(req.body),
                     [self, to, correlation, api = req.api_key, version = req.version,
                      request = std::move(m.body)](std::optional<Bytes> body, bool refused) {
                       if (self->stopping) return;
                       if (!body) {
                         self->step([&] { self->node->request_failed(to, correlation, refused, steady_clock_ms()); });
                         return;
                       }
                       raft::Message resp;
                       resp.from = to;
                       resp.to = self->options.node_id;
                       resp.correlation_id = correlation;
                       try {
                         resp.body = decode_response(api, version, *body, request);
                         if (response_error(resp.body) == raft::Errc::inconsistent_cluster_id) {
                           // Not an answer the core understands: the peer is of another cluster.
                           if (self->mismatch_log.allow(to, steady_clock_ms())) {
                             module_logger("quorum")->error(
                                 "node {} refuses this node's requests: it belongs to another cluster than {} "
                                 "(controller.quorum.voters or cluster.id differ between the nodes)",
                                 to, self->options.cluster_id);
                           }
                           return;
                         }
                         if (const auto* f = std::get_if<raft::FetchResponse>(&resp.body);
                             f && f->error == raft::Errc::none) {
                           self->fetched_from_leader = true;
                         }
                       } catch (const std::exception& e) {
                         module_logger("quorum")->warn("malformed response from node {}: {}", to, e.what());
                         return;
                       }
                       self->step([&] { self->node->receive(resp, steady_clock_ms()); });
                     });
  }

  // Runs one input of the core and everything it causes. A store that fails leaves a node
  // that cannot keep its promises: it stops the process.
  template <typename F>
  void step(F&& f) {
    try {
      f();
      drain();
    } catch (const std::exception& e) {
      module_logger("quorum")->critical("the metadata quorum cannot continue: {}; stopping", e.what());
      spdlog::shutdown();
      std::_Exit(70);
    }
  }

  void publish_status() {
    QuorumStatus s;
    s.role = node->role();
    s.epoch = node->epoch();
    s.leader_id = node->leader_id();
    s.refused_predecessor = node->refused_predecessor();
    {
      std::lock_guard lock(status_mu);
      if (s.role != status.role || s.epoch != status.epoch || s.leader_id != status.leader_id) {
        module_logger("quorum")->info("replica {} is {} in epoch {} (leader {})", options.node_id,
                                      raft::role_name(s.role), s.epoch, s.leader_id);
      }
    }
    s.high_watermark = node->high_watermark();
    s.log_end_offset = node->log().end_offset();
    s.applied_offset = node->applied_offset();
    s.caught_up = caught_up();
    if (s.applied_offset >= s.high_watermark) last_confirmed = node->confirmed_at(steady_clock_ms());
    s.confirmed_at_ms = last_confirmed;
    if (s.role != raft::Role::leader && !proposals.empty()) fail_proposals("this node no longer leads the quorum");
    std::lock_guard lock(status_mu);
    status = s;
  }

  static asio::awaitable<void> tick_loop(std::shared_ptr<Impl> self) {
    struct Exit {
      ~Exit() { module_logger("quorum")->debug("tick loop ended"); }
    } on_exit;
    while (!self->stopping) {
      self->timer.expires_after(std::chrono::milliseconds(self->options.tick_ms));
      co_await self->timer.async_wait(asio::as_tuple(asio::use_awaitable));
      if (self->stopping) break;
      const int64_t now = steady_clock_ms();
      for (auto& [_, p] : self->peers) p->expire(now);
      self->step([&] { self->node->tick(now); });
    }
  }
};

QuorumDriver::QuorumDriver(QuorumOptions options, QuorumListener* listener)
    : options_(std::move(options)), impl_(std::make_shared<Impl>(options_, listener)) {}

QuorumDriver::~QuorumDriver() { stop(0); }

bool QuorumDriver::is_voter() const {
  for (const auto& v : options_.voters)
    if (v.id == options_.node_id) return true;
  return false;
}

void QuorumDriver::start() {
  auto& s = *impl_;
  std::vector<raft::ReplicaId> ids;
  for (const auto& v : options_.voters) ids.push_back(v.id);
  s.log = raft::DiskRaftLog::open(options_.dir, options_.log);
  if (const auto& lost = s.log->power_loss())
    module_logger("quorum")->warn("simulated power loss: the metadata log ends at {} (its last fsync), not {}",
                                  lost->end_after, lost->end_before);
  s.quorum_state = std::make_unique<raft::DiskQuorumStateStore>(options_.dir, ids, options_.cluster_id);
  s.snapshots = std::make_unique<raft::DiskSnapshotStore>(options_.dir);
  raft::RaftConfig cfg;
  cfg.node_id = options_.node_id;
  cfg.voters = ids;
  cfg.election_timeout_ms = options_.election_timeout_ms;
  cfg.fetch_timeout_ms = options_.fetch_timeout_ms;
  cfg.request_timeout_ms = std::max<int64_t>(options_.election_timeout_ms / 4, 50);
  cfg.fetch_backoff_ms = options_.fetch_backoff_ms;
  cfg.max_fetch_entries = options_.max_fetch_entries;
  cfg.snapshot_chunk_bytes = 1 << 20;
  cfg.random_seed = std::random_device{}() ^ (static_cast<uint64_t>(options_.node_id) << 32);
  s.node = std::make_unique<raft::RaftNode>(cfg, *s.log, *s.quorum_state, *s.snapshots);
  for (const auto& v : options_.voters) {
    if (v.id == options_.node_id) continue;
    s.peers.emplace(v.id, std::make_unique<PeerClient>(s.ctx.get_executor(), v,
                                                       "brokerd-quorum-" + std::to_string(options_.node_id),
                                                       options_.request_timeout_ms, options_.credentials));
  }
  s.node->start(steady_clock_ms());
  s.drain();
  asio::co_spawn(s.ctx, Impl::tick_loop(impl_), asio::detached);
  s.thread = std::thread([impl = impl_] {
    for (;;) {
      try {
        impl->ctx.run();
        break;
      } catch (const std::exception& e) {
        module_logger("quorum")->error("quorum driver: unhandled exception: {}", e.what());
      }
    }
  });
  module_logger("quorum")->info("metadata quorum replica {} started ({} voters, {}), log in {}", options_.node_id,
                                options_.voters.size(), is_voter() ? "voter" : "observer", options_.dir.string());
}

void QuorumDriver::stop(int64_t resign_wait_ms) {
  auto& s = *impl_;
  if (!s.thread.joinable()) return;
  std::promise<void> resigned;
  asio::post(s.ctx, [&s, &resigned] {
    s.step([&] {
      if (s.node->role() == raft::Role::leader) s.node->resign(steady_clock_ms());
    });
    resigned.set_value();
  });
  resigned.get_future().wait_for(std::chrono::seconds(2));
  // Let EndQuorumEpoch reach the other voters so they elect without waiting for a timeout.
  if (resign_wait_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(resign_wait_ms));
  std::promise<void> stopped;
  asio::post(s.ctx, [&s, &stopped] {
    s.stopping = true;
    s.fail_proposals("the node is stopping");
    s.timer.cancel();
    for (auto& [_, p] : s.peers) p->close();
    s.guard.reset();
    stopped.set_value();
  });
  stopped.get_future().wait_for(std::chrono::seconds(2));
  // Whatever is still pending (posted failure callbacks) finishes; then the thread ends.
  s.thread.join();
  if (s.snapshotter.joinable()) s.snapshotter.join();
  s.peers.clear();
  s.node.reset();
  s.snapshots.reset();
  s.quorum_state.reset();
  s.log.reset();
}

asio::awaitable<raft::MessageBody> QuorumDriver::handle(raft::ReplicaId from, raft::MessageBody request) {
  auto impl = impl_;
  auto fn = [impl, from, request = std::move(request)]() mutable -> raft::MessageBody {
    auto& s = *impl;
    if (!s.node || s.stopping) return unanswered(request);
    raft::Message m;
    m.from = from;
    m.to = s.options.node_id;
    m.correlation_id = s.next_inbound++;
    m.body = request;
    s.step([&] { s.node->receive(m, steady_clock_ms()); });
    auto it = s.replies.find(m.correlation_id);
    if (it == s.replies.end()) return unanswered(request);
    raft::MessageBody reply = std::move(it->second);
    s.replies.erase(it);
    return reply;
  };
  co_return co_await net::run_on(impl->ctx.get_executor(), std::move(fn));
}

asio::awaitable<raft::DescribeQuorumResponse> QuorumDriver::describe() {
  auto impl = impl_;
  auto fn = [impl]() -> raft::DescribeQuorumResponse {
    auto& s = *impl;
    if (!s.node) {
      raft::DescribeQuorumResponse r;
      r.error = raft::Errc::not_leader_or_follower;
      return r;
    }
    const int64_t now = steady_clock_ms();
    auto r = s.node->describe_quorum(now);
    // The core's times are steady milliseconds; DescribeQuorum speaks wall-clock ones.
    const int64_t shift = wall_clock_ms() - now;
    for (auto* list : {&r.current_voters, &r.observers}) {
      for (auto& v : *list) {
        if (v.last_fetch_timestamp >= 0) v.last_fetch_timestamp += shift;
        if (v.last_caught_up_timestamp >= 0) v.last_caught_up_timestamp += shift;
      }
    }
    return r;
  };
  co_return co_await net::run_on(impl->ctx.get_executor(), std::move(fn));
}

std::future<ProposeResult> QuorumDriver::propose(std::string payload) {
  auto impl = impl_;
  auto promise = std::make_shared<std::promise<ProposeResult>>();
  auto future = promise->get_future();
  asio::post(impl->ctx, [impl, promise, payload = std::move(payload)]() mutable {
    auto& s = *impl;
    if (!s.node || s.stopping) {
      promise->set_value(ProposeResult{false, -1, "the node is stopping"});
      return;
    }
    if (s.node->role() != raft::Role::leader || !s.caught_up()) {
      promise->set_value(ProposeResult{false, -1, "this node does not lead the metadata quorum"});
      return;
    }
    std::optional<raft::OffsetAndEpoch> at;
    s.step([&] { at = s.node->propose(std::move(payload), steady_clock_ms()); });
    if (!at) {
      promise->set_value(ProposeResult{false, -1, "this node does not lead the metadata quorum"});
      return;
    }
    if (s.node->applied_offset() > at->offset) {
      // Committed and applied within the same step (a quorum of one).
      promise->set_value(ProposeResult{true, at->offset, {}});
      return;
    }
    auto& p = s.proposals[at->offset];
    p.epoch = at->epoch;
    p.done = std::move(*promise);
  });
  return future;
}

QuorumStatus QuorumDriver::status() const {
  std::lock_guard lock(impl_->status_mu);
  return impl_->status;
}

}  // namespace brokerd::quorum
