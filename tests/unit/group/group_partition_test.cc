// The classic group state machine, driven without sockets: a GroupPartition on a local
// io_context, its records kept in memory, real timers with short timeouts.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>

#include "group/group_partition.h"

namespace brokerd::group {
namespace {

using namespace std::chrono_literals;
using E = ErrorCode;

Bytes bytes_of(std::string_view s) {
  Bytes b;
  for (char c : s) b.push_back(std::byte(c));
  return b;
}

Settings test_settings() {
  Settings s;
  s.initial_rebalance_delay_ms = 0;
  s.min_session_timeout_ms = 10;
  s.max_session_timeout_ms = 100000;
  return s;
}

struct Harness {
  explicit Harness(Settings s = test_settings()) : settings(s) {
    make();
    part->finish_loading();
  }
  void make() {
    part = std::make_unique<GroupPartition>(
        io.get_executor(), 0, settings,
        [this](std::vector<OffsetsRecord> records) {
          if (fail != E::none) return fail;
          for (auto& r : records) log.push_back(std::move(r));
          return E::none;
        },
        [this] { return now; });
  }
  // A fresh partition that replays everything written so far.
  void reload() {
    part->shutdown();
    make();
    for (const auto& r : log) {
      std::optional<std::span<const std::byte>> v;
      if (r.value) v = std::span<const std::byte>(*r.value);
      part->replay(r.key, v);
    }
    part->finish_loading();
  }

  template <typename T>
  std::shared_ptr<std::optional<T>> spawn(boost::asio::awaitable<T> a) {
    auto out = std::make_shared<std::optional<T>>();
    boost::asio::co_spawn(io, std::move(a), [out](std::exception_ptr e, T v) {
      if (e) std::rethrow_exception(e);
      *out = std::move(v);
    });
    return out;
  }
  // Runs the io_context until every result is in, or for at most `bound`.
  template <typename... R>
  bool run_until(std::chrono::milliseconds bound, const R&... results) {
    auto deadline = std::chrono::steady_clock::now() + bound;
    while (!((*results).has_value() && ...)) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      io.restart();
      io.run_for(2ms);
    }
    return true;
  }
  void run_for(std::chrono::milliseconds d) {
    io.restart();
    io.run_for(d);
  }

  JoinResult join(JoinRequest req) {
    auto r = spawn(part->join(std::move(req)));
    EXPECT_TRUE(run_until(2000ms, r));
    JoinResult timed_out;
    timed_out.error = E::request_timed_out;
    return r->value_or(timed_out);
  }
  SyncResult sync(const std::string& group, int32_t gen, const std::string& member,
                  std::vector<std::pair<std::string, Bytes>> assignments = {}) {
    SyncRequest s{group, gen, member, std::nullopt, std::nullopt, std::nullopt, std::move(assignments)};
    auto r = spawn(part->sync(std::move(s)));
    EXPECT_TRUE(run_until(2000ms, r));
    SyncResult timed_out;
    timed_out.error = E::request_timed_out;
    return r->value_or(timed_out);
  }

  boost::asio::io_context io;
  Settings settings;
  std::vector<OffsetsRecord> log;
  ErrorCode fail = E::none;
  int64_t now = 1'000'000;
  std::unique_ptr<GroupPartition> part;
};

JoinRequest join_req(const std::string& group, const std::string& member = "", int32_t session = 5000,
                     int32_t rebalance = 300) {
  JoinRequest r;
  r.group_id = group;
  r.member_id = member;
  r.client_id = "c";
  r.client_host = "/127.0.0.1";
  r.session_timeout_ms = session;
  r.rebalance_timeout_ms = rebalance;
  r.protocol_type = "consumer";
  r.protocols = {{"range", bytes_of("sub-" + member)}, {"roundrobin", bytes_of("rr")}};
  return r;
}

TEST(GroupPartition, FirstMemberLeadsAndGetsItsAssignment) {
  Harness h;
  auto j = h.join(join_req("g"));
  ASSERT_EQ(j.error, E::none);
  EXPECT_EQ(j.generation, 1);
  EXPECT_EQ(j.leader, j.member_id);
  EXPECT_EQ(j.protocol_name, "range");
  ASSERT_EQ(j.members.size(), 1u);
  auto s = h.sync("g", 1, j.member_id, {{j.member_id, bytes_of("all")}});
  EXPECT_EQ(s.error, E::none);
  EXPECT_EQ(s.assignment, bytes_of("all"));
  EXPECT_EQ(h.part->describe("g").state, GroupState::stable);
  EXPECT_EQ(h.part->heartbeat("g", j.member_id, std::nullopt, 1), E::none);
  EXPECT_EQ(h.part->heartbeat("g", j.member_id, std::nullopt, 0), E::illegal_generation);
  EXPECT_EQ(h.part->heartbeat("g", "nobody", std::nullopt, 1), E::unknown_member_id);
}

TEST(GroupPartition, SecondMemberTriggersARebalanceThatWaitsForTheFirst) {
  Harness h;
  auto a = h.join(join_req("g"));
  h.sync("g", 1, a.member_id, {{a.member_id, bytes_of("p0,p1")}});
  auto b = h.spawn(h.part->join(join_req("g")));
  h.run_for(20ms);
  EXPECT_FALSE(*b);  // waits for a to rejoin
  EXPECT_EQ(h.part->heartbeat("g", a.member_id, std::nullopt, 1), E::rebalance_in_progress);
  // A commit from the current generation is still accepted while preparing.
  CommitRequest c{"g", 1, a.member_id, std::nullopt, {{{"t", 0}, {5, -1, "", -1, -1}}}};
  EXPECT_EQ(h.part->commit(c), std::vector<ErrorCode>{E::none});
  auto a2 = h.spawn(h.part->join(join_req("g", a.member_id)));
  ASSERT_TRUE(h.run_until(1000ms, a2, b));
  EXPECT_EQ((*a2)->generation, 2);
  EXPECT_EQ((*b)->generation, 2);
  EXPECT_EQ((*a2)->leader, a.member_id);
  EXPECT_EQ((*a2)->members.size(), 2u);
  EXPECT_TRUE((*b)->members.empty());
  // Between join and sync nobody may commit, whatever its generation.
  c.generation = 1;
  EXPECT_EQ(h.part->commit(c), std::vector<ErrorCode>{E::rebalance_in_progress});
  c.generation = 2;
  EXPECT_EQ(h.part->commit(c), std::vector<ErrorCode>{E::rebalance_in_progress});

  auto sb = h.spawn(h.part->sync(SyncRequest{"g", 2, (*b)->member_id, {}, {}, {}, {}}));
  h.run_for(10ms);
  EXPECT_FALSE(*sb);  // waits for the leader's assignment
  auto sa = h.sync("g", 2, a.member_id, {{a.member_id, bytes_of("p0")}, {(*b)->member_id, bytes_of("p1")}});
  ASSERT_TRUE(h.run_until(1000ms, sb));
  EXPECT_EQ(sa.assignment, bytes_of("p0"));
  EXPECT_EQ((*sb)->assignment, bytes_of("p1"));
  EXPECT_EQ(h.part->commit(c), std::vector<ErrorCode>{E::none});
  c.generation = 1;
  EXPECT_EQ(h.part->commit(c), std::vector<ErrorCode>{E::illegal_generation});
  c.member_id = "stranger";
  EXPECT_EQ(h.part->commit(c), std::vector<ErrorCode>{E::unknown_member_id});
}

TEST(GroupPartition, InitialDelayGathersMembersJoiningTogether) {
  auto s = test_settings();
  s.initial_rebalance_delay_ms = 60;
  Harness h(s);
  auto a = h.spawn(h.part->join(join_req("g", "", 5000, 1000)));
  h.run_for(20ms);
  auto b = h.spawn(h.part->join(join_req("g", "", 5000, 1000)));
  auto c = h.spawn(h.part->join(join_req("g", "", 5000, 1000)));
  ASSERT_TRUE(h.run_until(2000ms, a, b, c));
  EXPECT_EQ((*a)->generation, 1);
  EXPECT_EQ((*b)->generation, 1);
  EXPECT_EQ((*c)->generation, 1);
  size_t with_members = 0;
  for (const auto& r : {a, b, c}) with_members += (*r)->members.size();
  EXPECT_EQ(with_members, 3u);  // only the leader gets the member list
}

TEST(GroupPartition, MemberIdRequiredFirstThenJoin) {
  Harness h;
  auto req = join_req("g");
  req.require_known_member_id = true;
  auto first = h.join(req);
  EXPECT_EQ(first.error, E::member_id_required);
  EXPECT_FALSE(first.member_id.empty());
  req.member_id = first.member_id;
  auto second = h.join(req);
  EXPECT_EQ(second.error, E::none);
  EXPECT_EQ(second.member_id, first.member_id);
  EXPECT_EQ(second.generation, 1);
}

TEST(GroupPartition, ValidationErrors) {
  auto s = test_settings();
  s.max_size = 1;
  Harness h(s);
  EXPECT_EQ(h.join(join_req("g", "", 5)).error, E::invalid_session_timeout);
  EXPECT_EQ(h.join(join_req("g", "", 200000)).error, E::invalid_session_timeout);
  EXPECT_EQ(h.join(join_req("")).error, E::invalid_group_id);
  EXPECT_EQ(h.join(join_req("g", "made-up")).error, E::unknown_member_id);
  auto a = h.join(join_req("g"));
  ASSERT_EQ(a.error, E::none);
  auto other = join_req("g");
  other.protocols = {{"sticky", {}}};
  EXPECT_EQ(h.join(other).error, E::inconsistent_group_protocol);
  EXPECT_EQ(h.join(join_req("g")).error, E::group_max_size_reached);
  EXPECT_EQ(h.sync("g", 1, "nobody").error, E::unknown_member_id);
  EXPECT_EQ(h.sync("g", 7, a.member_id).error, E::illegal_generation);
  EXPECT_EQ(h.part->delete_group("g"), E::non_empty_group);
  EXPECT_EQ(h.part->delete_group("missing"), E::group_id_not_found);
}

TEST(GroupPartition, SilentMemberIsRemovedAfterItsSessionTimeout) {
  Harness h;
  auto a = h.join(join_req("g", "", 5000));
  h.sync("g", 1, a.member_id, {});
  auto b = h.spawn(h.part->join(join_req("g", "", 80)));
  auto a2 = h.spawn(h.part->join(join_req("g", a.member_id, 5000)));
  ASSERT_TRUE(h.run_until(1000ms, a2, b));
  ASSERT_EQ((*b)->generation, 2);
  h.sync("g", 2, a.member_id, {});
  ASSERT_TRUE(h.run_until(100ms, b));
  // b never heartbeats: after 80 ms it is gone and a must rebalance alone.
  auto start = std::chrono::steady_clock::now();
  ErrorCode e = E::none;
  while (e == E::none && std::chrono::steady_clock::now() - start < 2s) {
    h.run_for(10ms);
    e = h.part->heartbeat("g", a.member_id, std::nullopt, 2);
  }
  EXPECT_EQ(e, E::rebalance_in_progress);
  auto a3 = h.join(join_req("g", a.member_id, 5000));
  EXPECT_EQ(a3.generation, 3);
  EXPECT_EQ(a3.members.size(), 1u);
  EXPECT_EQ(h.part->heartbeat("g", (*b)->member_id, std::nullopt, 3), E::unknown_member_id);
}

TEST(GroupPartition, LeaveTriggersRebalanceAndEmptyGroupCanBeDeleted) {
  Harness h;
  auto a = h.join(join_req("g"));
  h.sync("g", 1, a.member_id, {});
  CommitRequest c{"g", 1, a.member_id, std::nullopt, {{{"t", 0}, {10, -1, "m", -1, -1}}}};
  EXPECT_EQ(h.part->commit(c), std::vector<ErrorCode>{E::none});
  auto r = h.part->leave("g", {{a.member_id, std::nullopt}, {"ghost", std::nullopt}});
  EXPECT_EQ(r.error, E::none);
  EXPECT_EQ(r.members, (std::vector<ErrorCode>{E::none, E::unknown_member_id}));
  h.run_for(5ms);
  EXPECT_EQ(h.part->describe("g").state, GroupState::empty);
  EXPECT_EQ(h.part->fetch("g", std::nullopt).offsets.size(), 1u);
  EXPECT_EQ(h.part->delete_group("g"), E::none);
  EXPECT_EQ(h.part->describe("g").state, GroupState::dead);
  EXPECT_TRUE(h.part->fetch("g", std::nullopt).offsets.empty());
  h.reload();
  EXPECT_EQ(h.part->group_count(), 0u);
}

TEST(GroupPartition, SimpleCommitsAndTheirChecks) {
  Harness h;
  CommitRequest simple{"solo", -1, "", std::nullopt, {{{"t", 0}, {3, -1, "", -1, -1}}, {{"t", 1}, {4, -1, "", -1, -1}}}};
  EXPECT_EQ(h.part->commit(simple), (std::vector<ErrorCode>{E::none, E::none}));
  CommitRequest member{"other", 4, "x", std::nullopt, {{{"t", 0}, {1, -1, "", -1, -1}}}};
  EXPECT_EQ(h.part->commit(member), std::vector<ErrorCode>{E::illegal_generation});
  auto f = h.part->fetch("solo", std::vector<OffsetKey>{{"t", 0}, {"t", 1}, {"t", 2}});
  ASSERT_EQ(f.offsets.size(), 3u);
  EXPECT_EQ(f.offsets[0].entry.offset, 3);
  EXPECT_EQ(f.offsets[1].entry.offset, 4);
  EXPECT_EQ(f.offsets[2].entry.offset, -1);
  // Metadata too large is refused per partition.
  h.settings.offset_metadata_max_bytes = 2;
  h.make();
  h.part->finish_loading();
  CommitRequest big{"solo", -1, "", std::nullopt, {{{"t", 0}, {3, -1, "long", -1, -1}}}};
  EXPECT_EQ(h.part->commit(big), std::vector<ErrorCode>{E::offset_metadata_too_large});
  // A failed append fails the commit and changes nothing.
  h.fail = E::kafka_storage_error;
  CommitRequest c2{"solo2", -1, "", std::nullopt, {{{"t", 0}, {3, -1, "", -1, -1}}}};
  EXPECT_EQ(h.part->commit(c2), std::vector<ErrorCode>{E::not_coordinator});
  EXPECT_TRUE(h.part->fetch("solo2", std::nullopt).offsets.empty());
}

TEST(GroupPartition, ReplayRestoresOffsetsAndMembers) {
  Harness h;
  auto a = h.join(join_req("g"));
  h.sync("g", 1, a.member_id, {{a.member_id, bytes_of("asg")}});
  CommitRequest c{"g", 1, a.member_id, std::nullopt, {{{"t", 0}, {10, 2, "x", -1, -1}}}};
  h.part->commit(c);
  c.offsets[0].second.offset = 11;
  h.part->commit(c);
  CommitRequest simple{"s", -1, "", std::nullopt, {{{"u", 3}, {7, -1, "", -1, -1}}}};
  h.part->commit(simple);
  h.reload();
  auto f = h.part->fetch("g", std::nullopt);
  ASSERT_EQ(f.offsets.size(), 1u);
  EXPECT_EQ(f.offsets[0].entry.offset, 11);
  EXPECT_EQ(f.offsets[0].entry.leader_epoch, 2);
  EXPECT_EQ(f.offsets[0].entry.metadata, "x");
  auto d = h.part->describe("g");
  EXPECT_EQ(d.state, GroupState::stable);
  ASSERT_EQ(d.members.size(), 1u);
  EXPECT_EQ(d.members[0].assignment, bytes_of("asg"));
  EXPECT_EQ(h.part->heartbeat("g", a.member_id, std::nullopt, 1), E::none);
  EXPECT_EQ(h.part->fetch("s", std::vector<OffsetKey>{{"u", 3}}).offsets[0].entry.offset, 7);
}

TEST(GroupPartition, ReplaySkipsRecordsThatDoNotDecodeExactly) {
  Harness h;
  CommitRequest c{"victim", -1, "", std::nullopt, {{{"orders", 0}, {5, -1, "", -1, -1}}}};
  h.part->commit(c);
  // A forged commit whose value carries bytes after its fields, and one of an unknown key
  // version: neither changes the group.
  OffsetsRecord forged{encode_offset_key("victim", {"orders", 0}), encode_offset_value({999999, -1, "", 1, -1})};
  forged.value->push_back(std::byte{0});
  h.log.push_back(forged);
  OffsetsRecord unknown{Bytes{std::byte{0}, std::byte{9}}, std::nullopt};
  h.log.push_back(unknown);
  h.reload();
  EXPECT_EQ(h.part->fetch("victim", std::nullopt).offsets.at(0).entry.offset, 5);
  std::string why;
  EXPECT_FALSE(h.part->replay(forged.key, std::span<const std::byte>(*forged.value), &why));
  EXPECT_NE(why.find("unreadable value"), std::string::npos) << why;
  EXPECT_FALSE(h.part->replay(unknown.key, std::nullopt, &why));
}

TEST(GroupPartition, StaticMemberRejoinKeepsAssignmentAndFencesTheOldId) {
  Harness h;
  auto req = join_req("g");
  req.instance_id = "host-1";
  auto a = h.join(req);
  ASSERT_EQ(a.error, E::none);
  auto other = join_req("g");
  auto b = h.spawn(h.part->join(other));
  auto a2 = h.spawn(h.part->join([&] { auto r = req; r.member_id = a.member_id; return r; }()));
  ASSERT_TRUE(h.run_until(1000ms, a2, b));
  ASSERT_EQ((*a2)->leader, a.member_id);
  int32_t gen = (*a2)->generation;
  auto sb = h.spawn(h.part->sync(SyncRequest{"g", gen, (*b)->member_id, {}, {}, {}, {}}));
  h.sync("g", gen, a.member_id, {{a.member_id, bytes_of("A")}, {(*b)->member_id, bytes_of("B")}});
  ASSERT_TRUE(h.run_until(500ms, sb));
  // A static member leaves by its instance id alone.
  auto r = h.part->leave("g", {{"", std::string("host-1")}});
  EXPECT_EQ(r.members, std::vector<ErrorCode>{E::none});
  EXPECT_EQ(h.part->heartbeat("g", a.member_id, std::nullopt, gen), E::unknown_member_id);

  // A static follower that restarts gets a new id, the same generation and its assignment.
  auto c_req = join_req("g");
  c_req.instance_id = "host-2";
  auto c = h.spawn(h.part->join(c_req));
  auto b2 = h.spawn(h.part->join(join_req("g", (*b)->member_id)));
  ASSERT_TRUE(h.run_until(1000ms, c, b2));
  int32_t g2 = (*c)->generation;
  std::string leader = (*b2)->leader;
  std::string follower = leader == (*c)->member_id ? (*b)->member_id : (*c)->member_id;
  ASSERT_EQ(follower, (*c)->member_id) << "the dynamic member stays leader";
  auto sc = h.spawn(h.part->sync(SyncRequest{"g", g2, (*c)->member_id, {}, {}, {}, {}}));
  h.sync("g", g2, leader, {{leader, bytes_of("L")}, {(*c)->member_id, bytes_of("C")}});
  ASSERT_TRUE(h.run_until(500ms, sc));
  auto restart = h.join(c_req);  // empty member id, known instance id
  EXPECT_EQ(restart.error, E::none);
  EXPECT_NE(restart.member_id, (*c)->member_id);
  EXPECT_EQ(restart.generation, g2);
  EXPECT_EQ(h.sync("g", g2, restart.member_id).assignment, bytes_of("C"));
  EXPECT_EQ(h.part->heartbeat("g", (*c)->member_id, std::string("host-2"), g2), E::fenced_instance_id);
  EXPECT_EQ(h.part->heartbeat("g", restart.member_id, std::string("host-2"), g2), E::none);
}

TEST(GroupPartition, NotLoadedAnswersLoadInProgress) {
  Harness h;
  h.make();  // a fresh partition that has not finished loading
  EXPECT_EQ(h.join(join_req("g")).error, E::coordinator_load_in_progress);
  EXPECT_EQ(h.part->heartbeat("g", "m", std::nullopt, 1), E::coordinator_load_in_progress);
  EXPECT_EQ(h.part->fetch("g", std::nullopt).error, E::coordinator_load_in_progress);
}

TEST(GroupPartition, OffsetsOfEmptyGroupsExpire) {
  auto s = test_settings();
  s.offsets_retention_ms = 1000;
  Harness h(s);
  CommitRequest simple{"old", -1, "", std::nullopt, {{{"t", 0}, {3, -1, "", -1, -1}}}};
  h.part->commit(simple);
  EXPECT_EQ(h.part->expire_offsets(), 0u);
  h.now += 1001;
  EXPECT_EQ(h.part->expire_offsets(), 1u);
  EXPECT_EQ(h.part->group_count(), 0u);
  ASSERT_GE(h.log.size(), 2u);
  EXPECT_FALSE(h.log.back().value);  // the group's tombstone
  h.reload();
  EXPECT_TRUE(h.part->fetch("old", std::nullopt).offsets.empty());
}

// Kafka: a static member that restarts while the leader computes the assignment (between
// JoinGroup and SyncGroup) triggers a new rebalance; otherwise the leader assigns to the old
// member id and the new incarnation gets nothing.
TEST(GroupPartition, StaticRestartDuringCompletingRebalanceRebalances) {
  Harness h;
  auto a = h.join(join_req("g"));
  h.sync("g", 1, a.member_id, {{a.member_id, bytes_of("all")}});
  auto b_req = join_req("g");
  b_req.instance_id = "host-b";
  auto b = h.spawn(h.part->join(b_req));
  auto a2 = h.spawn(h.part->join(join_req("g", a.member_id)));
  ASSERT_TRUE(h.run_until(1000ms, a2, b));
  ASSERT_EQ((*a2)->generation, 2);
  ASSERT_EQ((*a2)->leader, a.member_id);
  std::string old_b = (*b)->member_id;
  // b restarts before the leader's SyncGroup.
  auto b2 = h.spawn(h.part->join(b_req));
  h.run_for(20ms);
  EXPECT_FALSE(*b2) << "the restart must wait for a new generation";
  auto sa = h.sync("g", 2, a.member_id, {{a.member_id, bytes_of("A")}, {old_b, bytes_of("B")}});
  EXPECT_EQ(sa.error, E::rebalance_in_progress);
  auto a3 = h.spawn(h.part->join(join_req("g", a.member_id)));
  ASSERT_TRUE(h.run_until(1000ms, a3, b2));
  ASSERT_EQ((*b2)->error, E::none);
  EXPECT_EQ((*a3)->generation, 3);
  EXPECT_EQ((*b2)->generation, 3);
  auto sb = h.spawn(h.part->sync(SyncRequest{"g", 3, (*b2)->member_id, {}, {}, {}, {}}));
  h.sync("g", 3, a.member_id, {{a.member_id, bytes_of("A")}, {(*b2)->member_id, bytes_of("B")}});
  ASSERT_TRUE(h.run_until(500ms, sb));
  EXPECT_EQ((*sb)->assignment, bytes_of("B"));
}

// KIP-345: a static member restarting in a Stable group does not rebalance as long as the
// group's protocol stays the same, even when its subscription metadata changed (a restarted
// consumer no longer owns partitions, and says so in its metadata).
TEST(GroupPartition, StaticRestartWithNewMetadataButSameProtocolKeepsTheGeneration) {
  Harness h;
  auto a = h.join(join_req("g"));
  h.sync("g", 1, a.member_id, {{a.member_id, bytes_of("all")}});
  auto b_req = join_req("g");
  b_req.instance_id = "host-b";
  auto b = h.spawn(h.part->join(b_req));
  auto a2 = h.spawn(h.part->join(join_req("g", a.member_id)));
  ASSERT_TRUE(h.run_until(1000ms, a2, b));
  auto sb = h.spawn(h.part->sync(SyncRequest{"g", 2, (*b)->member_id, {}, {}, {}, {}}));
  h.sync("g", 2, a.member_id, {{a.member_id, bytes_of("A")}, {(*b)->member_id, bytes_of("B")}});
  ASSERT_TRUE(h.run_until(500ms, sb));
  auto restart_req = b_req;
  restart_req.protocols = {{"range", bytes_of("sub-owned-nothing")}, {"roundrobin", bytes_of("rr2")}};
  auto restart = h.join(restart_req);
  ASSERT_EQ(restart.error, E::none);
  EXPECT_EQ(restart.generation, 2);
  EXPECT_EQ(h.part->describe("g").state, GroupState::stable);
  EXPECT_EQ(h.sync("g", 2, restart.member_id).assignment, bytes_of("B"));
  // A change of the protocol the group would select does rebalance.
  auto switch_req = b_req;
  switch_req.protocols = {{"roundrobin", bytes_of("rr")}};
  auto a_switch = join_req("g", a.member_id);
  a_switch.protocols = {{"roundrobin", bytes_of("rr")}, {"range", bytes_of("sub-")}};
  auto sw = h.spawn(h.part->join(switch_req));
  h.run_for(20ms);
  EXPECT_FALSE(*sw) << "roundrobin now wins the vote, so the group rebalances";
  auto a3 = h.spawn(h.part->join(a_switch));
  ASSERT_TRUE(h.run_until(1000ms, a3, sw));
  EXPECT_EQ((*sw)->generation, 3);
  EXPECT_EQ((*sw)->protocol_name, "roundrobin");
}

// Kafka (KAFKA-12890): members that do not send SyncGroup within the rebalance timeout after
// the join phase are removed and the group rebalances; a leader that heartbeats but never
// syncs must not keep the group in CompletingRebalance forever.
TEST(GroupPartition, MembersThatNeverSyncAreRemovedAfterTheRebalanceTimeout) {
  Harness h;
  auto a = h.join(join_req("g", "", 5000, 200));
  h.sync("g", 1, a.member_id, {{a.member_id, bytes_of("all")}});
  auto b = h.spawn(h.part->join(join_req("g", "", 5000, 200)));
  auto a2 = h.spawn(h.part->join(join_req("g", a.member_id, 5000, 200)));
  ASSERT_TRUE(h.run_until(1000ms, a2, b));
  ASSERT_EQ((*a2)->leader, a.member_id);
  auto sb = h.spawn(h.part->sync(SyncRequest{"g", 2, (*b)->member_id, {}, {}, {}, {}}));
  // The leader heartbeats but never sends its SyncGroup.
  auto start = std::chrono::steady_clock::now();
  while (!*sb && std::chrono::steady_clock::now() - start < 1500ms) {
    h.run_for(20ms);
    h.part->heartbeat("g", a.member_id, std::nullopt, 2);
  }
  ASSERT_TRUE(*sb);
  EXPECT_EQ((*sb)->error, E::rebalance_in_progress);
  EXPECT_EQ(h.part->heartbeat("g", a.member_id, std::nullopt, 2), E::unknown_member_id);
  auto b2 = h.join(join_req("g", (*b)->member_id, 5000, 200));
  EXPECT_EQ(b2.generation, 3);
  EXPECT_EQ(b2.leader, (*b)->member_id);
  EXPECT_EQ(b2.members.size(), 1u);

  // A follower that never syncs is removed as well, even once the group is Stable.
  h.sync("g", 3, (*b)->member_id, {{(*b)->member_id, bytes_of("all")}});
  auto c = h.spawn(h.part->join(join_req("g", "", 5000, 200)));
  auto b3 = h.spawn(h.part->join(join_req("g", (*b)->member_id, 5000, 200)));
  ASSERT_TRUE(h.run_until(1000ms, c, b3));
  ASSERT_EQ((*b3)->generation, 4);
  EXPECT_EQ(h.sync("g", 4, (*b)->member_id, {{(*b)->member_id, bytes_of("x")}}).error, E::none);
  start = std::chrono::steady_clock::now();
  ErrorCode e = E::none;
  while (e == E::none && std::chrono::steady_clock::now() - start < 1500ms) {
    h.run_for(20ms);
    e = h.part->heartbeat("g", (*b)->member_id, std::nullopt, 4);
    h.part->heartbeat("g", (*c)->member_id, std::nullopt, 4);
  }
  EXPECT_EQ(e, E::rebalance_in_progress);
  EXPECT_EQ(h.part->heartbeat("g", (*c)->member_id, std::nullopt, 4), E::unknown_member_id);
}

// Kafka keeps static members that have not rejoined when the join phase completes (they are
// only removed by their session timeout), so a slow static restart does not lose its place.
TEST(GroupPartition, StaticMemberThatHasNotRejoinedStaysInTheGroup) {
  Harness h;
  auto a_req = join_req("g", "", 5000, 100);
  a_req.instance_id = "host-a";
  auto a = h.join(a_req);
  h.sync("g", 1, a.member_id, {{a.member_id, bytes_of("all")}});
  // A dynamic member joins; the static one does not rejoin within the rebalance timeout.
  auto b = h.spawn(h.part->join(join_req("g", "", 5000, 100)));
  ASSERT_TRUE(h.run_until(1500ms, b));
  ASSERT_EQ((*b)->error, E::none);
  EXPECT_EQ((*b)->generation, 2);
  EXPECT_EQ((*b)->leader, (*b)->member_id) << "the leader must be a member that rejoined";
  EXPECT_EQ((*b)->members.size(), 2u);
  EXPECT_EQ(h.part->describe("g").members.size(), 2u);
  // The static member is still known and can catch up with the current generation.
  EXPECT_EQ(h.part->heartbeat("g", a.member_id, std::string("host-a"), 2), E::none);
}

// Kafka: offsets of a group that never had members (a standalone consumer committing with
// generation -1) expire by their own commit time, not by when the group was created.
TEST(GroupPartition, StandaloneOffsetsExpireByTheirLastCommit) {
  auto s = test_settings();
  s.offsets_retention_ms = 1000;
  Harness h(s);
  CommitRequest simple{"solo", -1, "", std::nullopt, {{{"t", 0}, {3, -1, "", -1, -1}}}};
  ASSERT_EQ(h.part->commit(simple), std::vector<ErrorCode>{E::none});
  h.now += 900;
  simple.offsets[0].second.offset = 4;
  ASSERT_EQ(h.part->commit(simple), std::vector<ErrorCode>{E::none});
  h.now += 200;
  EXPECT_EQ(h.part->expire_offsets(), 0u) << "committed 200 ms ago";
  EXPECT_EQ(h.part->fetch("solo", std::vector<OffsetKey>{{"t", 0}}).offsets[0].entry.offset, 4);
  h.now += 900;
  EXPECT_EQ(h.part->expire_offsets(), 1u);
}

}  // namespace
}  // namespace brokerd::group
