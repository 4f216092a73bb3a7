#pragma once
// A metadata quorum of one, in memory, for tests of the state machine without sockets or
// threads: a proposal commits at once and is applied to the listener before propose()
// returns.
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "brokerd/common/clock.h"
#include "brokerd/quorum/quorum_log.h"

namespace brokerd::testing {

class MemoryQuorum final : public quorum::QuorumLog {
 public:
  MemoryQuorum(quorum::QuorumListener& listener, int32_t node_id) : listener_(listener), node_id_(node_id) {}

  quorum::QuorumStatus status() const override {
    std::lock_guard lock(mu_);
    quorum::QuorumStatus s;
    s.role = raft::Role::leader;
    s.epoch = 1;
    s.leader_id = node_id_;
    s.high_watermark = s.log_end_offset = s.applied_offset = next_offset_;
    s.caught_up = true;
    s.confirmed_at_ms = steady_clock_ms();
    return s;
  }

  std::future<quorum::ProposeResult> propose(std::string payload) override {
    std::lock_guard lock(mu_);
    raft::Entry e;
    e.offset = next_offset_++;
    e.epoch = 1;
    e.payload = std::move(payload);
    entries_.push_back(e);
    listener_.apply({e});
    std::promise<quorum::ProposeResult> done;
    done.set_value({true, e.offset, {}});
    return done.get_future();
  }

  // Every entry committed so far, in order (to replay into another listener).
  std::vector<raft::Entry> entries() const {
    std::lock_guard lock(mu_);
    return entries_;
  }

 private:
  quorum::QuorumListener& listener_;
  const int32_t node_id_;
  mutable std::mutex mu_;
  raft::Offset next_offset_ = 0;
  std::vector<raft::Entry> entries_;
};

}  // namespace brokerd::testing
