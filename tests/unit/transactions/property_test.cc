// Random sequences of requests, time-outs, expirations, failed writes and failovers, from
// producers that are right, stale or confused: no transition the state table forbids is ever
// applied, every transition the rules ask for is accepted, and the log replays to the cache.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "driver.h"

namespace brokerd::transactions {
namespace {

using testing::Driver;

class Chaos {
 public:
  explicit Chaos(uint32_t seed) : rng_(seed) {}

  void run(int steps) {
    c_.config.transactional_id_expiration_ms = 50'000;
    c_.config.txn_version = pick(2) ? kTxnVersion2 : kTxnVersion0;
    for (int i = 0; i < steps && !c_.refused; ++i) step();
  }

  const Driver& driver() const { return c_; }

 private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  std::string some_id() { return "tx-" + std::to_string(pick(3)); }

  // The producer id and epoch a client sends: usually the current ones, sometimes a stale or
  // a future epoch, another id, or the epoch just below (a version 2 retry).
  ProducerIdAndEpoch some_producer(const std::string& id) {
    const TxnMetadata* md = c_.find(id);
    ProducerIdAndEpoch p = md ? ProducerIdAndEpoch{md->producer_id, md->producer_epoch} : ProducerIdAndEpoch{1000, 0};
    switch (pick(8)) {
      case 0: p.epoch = static_cast<ProducerEpoch>(p.epoch - 1); break;
      case 1: p.epoch = static_cast<ProducerEpoch>(p.epoch + 1); break;
      case 2: p.producer_id = 5; break;
      default: break;
    }
    return p;
  }

  std::vector<TopicPartition> some_partitions() {
    std::vector<TopicPartition> out;
    for (int n = 1 + pick(3); n > 0; --n) out.push_back({pick(2) ? "t" : "u", pick(4)});
    return out;
  }

  void step() {
    c_.now += pick(3'000);
    c_.fail_next_write = pick(12) == 0;
    const std::string id = some_id();
    const int16_t version = pick(2) ? kTxnVersion2 : kTxnVersion0;
    switch (pick(11)) {
      case 0:
      case 1: {
        std::optional<ProducerIdAndEpoch> expected;
        if (pick(3) == 0) expected = some_producer(id);
        c_.init(id, 5'000 + pick(20'000), expected);
        break;
      }
      case 2:
      case 3: c_.add(id, some_producer(id), some_partitions(), version); break;
      case 4: c_.add_offsets_of(id, some_producer(id), pick(50)); break;
      case 5:
      case 6: c_.end(id, some_producer(id), pick(2) ? TxnResult::commit : TxnResult::abort, version); break;
      case 7: c_.write_markers(); break;
      case 8: c_.abort_timed_out_transactions(); break;
      case 9:
        c_.now += pick(2) ? 60'000 : 0;
        c_.expire_ids();
        break;
      case 10:
        // The coordinator moves; in-flight markers are lost with it and resumed from the log.
        if (pick(3) == 0) {
          c_.fail_next_write = false;
          check_log_matches_cache();
          c_ = c_.failover();
        }
        break;
    }
    // Some epochs near the end of the range, to reach rotations and version 2's overflow.
    if (pick(40) == 0) {
      auto it = c_.cache.find(id);
      if (it != c_.cache.end() && !it->second.transition_in_progress() && it->second.producer_epoch >= 0 &&
          !is_prepare(it->second.state))
        it->second.producer_epoch = static_cast<ProducerEpoch>(kMaxProducerEpoch - 2 + pick(2));
    }
  }

  // What the cache holds is what a new coordinator would load (the fields the log keeps).
  void check_log_matches_cache() {
    if (c_.config.txn_version != kTxnVersion2) return;  // version 0 values drop fields
    auto loaded = replay_txn_log(c_.log);
    for (const auto& [id, md] : c_.cache) {
      if (md.pending_state || !loaded.contains(id)) continue;
      // Epochs edited in place by step() are not in the log; compare what was written.
      TxnValue written = loaded.at(id).value();
      written.last_producer_epoch = md.last_producer_epoch;
      written.producer_epoch = md.producer_epoch;
      EXPECT_EQ(written, md.value()) << id;
    }
  }

  std::mt19937 rng_;
  Driver c_;
};

TEST(TransactionsProperty, RandomRequestsNeverBreakTheStateTable) {
  std::set<std::pair<TxnState, TxnState>> reached;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    Chaos chaos(seed);
    chaos.run(400);
    const Driver& c = chaos.driver();
    ASSERT_FALSE(c.refused) << "seed " << seed << ": " << c.refused->transactional_id << " "
                            << state_name(c.refused->from) << " -> " << state_name(c.refused->to);
    for (const auto& t : c.applied) {
      ASSERT_TRUE(can_transition(t.from, t.to)) << "seed " << seed;
      reached.emplace(t.from, t.to);
    }
  }
  // The runs reach every transition the rules write (a fence is written as its PrepareAbort,
  // so PrepareEpochFence never appears).
  for (int8_t to = 0; to < 7; ++to)
    for (TxnState from : valid_previous_states(static_cast<TxnState>(to)))
      if (from != TxnState::prepare_epoch_fence)
        EXPECT_TRUE(reached.contains({from, static_cast<TxnState>(to)}))
            << state_name(from) << " -> " << state_name(static_cast<TxnState>(to)) << " never happened";
}

}  // namespace
}  // namespace brokerd::transactions
