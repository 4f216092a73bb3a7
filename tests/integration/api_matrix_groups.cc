// The api_matrix cells of the consumer group APIs: committed offsets, the coordinator,
// membership (join, heartbeat, sync, leave) and the groups' listing and deletion.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api_matrix.h"

namespace api_matrix {

void cell_offset_commit(int16_t v) {
  std::string group = vname("matrix-oc", v);
  bp::OffsetCommitRequest req;
  req.group_id = group;
  if (v >= 1) {
    auto [member, gen] = join_group(group);
    req.member_id = member;
    req.generation_id_or_member_epoch = gen;
  }
  if (v >= 2 && v <= 4) req.retention_time_ms = -1;
  bp::OffsetCommitRequest::OffsetCommitRequestTopic t;
  if (v >= 10) t.topic_id = g_topic_id;  // KIP-848: topics by id
  else t.name = kTopic;
  for (int32_t p : {0, 99}) {
    bp::OffsetCommitRequest::OffsetCommitRequestPartition cp;
    cp.partition_index = p;
    cp.committed_offset = 3;
    if (v >= 6) cp.committed_leader_epoch = 0;
    cp.committed_metadata = "meta";
    t.partitions.push_back(cp);
  }
  req.topics.push_back(t);
  bp::OffsetCommitRequest::OffsetCommitRequestTopic unknown = t;
  if (v >= 10) unknown.topic_id = kUnknownTopicId;
  else unknown.name = "matrix-no-such-topic";
  unknown.partitions.resize(1);
  req.topics.push_back(unknown);
  auto resp = check_cell<bp::OffsetCommitResponse>(req, v);
  expect(resp.topics.size() == 2 && resp.topics[0].partitions.size() == 2, "OffsetCommit: 2 partitions expected");
  expect(resp.topics[0].partitions[0].error_code == 0,
         "OffsetCommit: error " + std::to_string(resp.topics[0].partitions[0].error_code));
  expect(resp.topics[1].partitions.at(0).error_code == (v >= 10 ? 100 : 3),
         "OffsetCommit: unknown topic answered " + std::to_string(resp.topics[1].partitions.at(0).error_code));
  if (v >= 10) expect(resp.topics[0].topic_id == g_topic_id, "OffsetCommit: topic id not echoed");
}

void cell_offset_fetch(int16_t v) {
  std::string group = vname("matrix-of", v);
  commit_offset(group, 2);
  bp::OffsetFetchRequest req;
  if (v <= 7) {
    req.group_id = group;
    bp::OffsetFetchRequest::OffsetFetchRequestTopic t;
    t.name = kTopic;
    t.partition_indexes = {0, 1, 99};
    req.topics->push_back(t);
  } else {
    bp::OffsetFetchRequest::OffsetFetchRequestGroup g;
    g.group_id = group;
    bp::OffsetFetchRequest::OffsetFetchRequestTopics t;
    if (v >= 10) t.topic_id = g_topic_id;  // KIP-848: topics by id
    else t.name = kTopic;
    t.partition_indexes = {0, 1, 99};
    g.topics->push_back(t);
    if (v >= 10) {
      bp::OffsetFetchRequest::OffsetFetchRequestTopics unknown;
      unknown.topic_id = kUnknownTopicId;
      unknown.partition_indexes = {0};
      g.topics->push_back(unknown);
    }
    req.groups.push_back(g);
    bp::OffsetFetchRequest::OffsetFetchRequestGroup all;  // every committed topic
    all.group_id = group;
    all.topics = std::nullopt;
    req.groups.push_back(all);
  }
  if (v >= 7) req.require_stable = true;
  auto resp = check_cell<bp::OffsetFetchResponse>(req, v);
  if (v <= 7) {
    expect(resp.topics.size() == 1 && resp.topics[0].partitions.size() == 3, "OffsetFetch: 3 partitions expected");
    expect(resp.topics[0].partitions[0].committed_offset == 2, "OffsetFetch: committed offset");
  } else {
    expect(resp.groups.size() == 2, "OffsetFetch: 2 groups expected");
    const auto& named = resp.groups[0].topics;
    expect(named.size() == (v >= 10 ? 2u : 1u) && named[0].partitions.size() == 3, "OffsetFetch: 3 partitions expected");
    expect(named[0].partitions[0].committed_offset == 2, "OffsetFetch: committed offset");
    if (v >= 10) {
      expect(named[0].topic_id == g_topic_id, "OffsetFetch: topic id");
      expect(named[1].topic_id == kUnknownTopicId && named[1].partitions.at(0).error_code == 100,
             "OffsetFetch: unknown topic id not refused with UNKNOWN_TOPIC_ID");
      expect(!resp.groups[1].topics.empty() && resp.groups[1].topics[0].topic_id == g_topic_id,
             "OffsetFetch: whole-group listing lacks topic ids");
    }
  }
  if (v >= 2) {  // all topics of the group (null topics)
    bp::OffsetFetchRequest all;
    if (v <= 7) {
      all.group_id = group;
      all.topics = std::nullopt;
    } else {
      bp::OffsetFetchRequest::OffsetFetchRequestGroup g;
      g.group_id = group;
      g.topics = std::nullopt;
      all.groups.push_back(g);
    }
    check_cell<bp::OffsetFetchResponse>(all, v);
  }
}

void cell_find_coordinator(int16_t v) {
  bp::FindCoordinatorRequest req;
  if (v <= 3) {
    req.key = "matrix-fc";
  } else {
    req.coordinator_keys = {"matrix-fc", "matrix-fc2"};
  }
  check_cell<bp::FindCoordinatorResponse>(req, v);
  if (v >= 1) {  // a transaction coordinator (creates __transaction_state on first use)
    bp::FindCoordinatorRequest txn = req;
    txn.key_type = 1;
    check_cell<bp::FindCoordinatorResponse>(txn, v);
  }
}

void cell_join_group(int16_t v) {
  std::string group = vname("matrix-jg", v);
  bp::JoinGroupRequest req;
  req.group_id = group;
  req.session_timeout_ms = 30000;
  if (v >= 1) req.rebalance_timeout_ms = 30000;
  req.protocol_type = "consumer";
  bp::JoinGroupRequest::JoinGroupRequestProtocol p;
  p.name = "range";
  p.metadata = Bytes(4, std::byte{1});
  req.protocols.push_back(p);
  if (v >= 5) req.group_instance_id = vname("matrix-instance", v);
  if (v >= 8) req.reason = "matrix";
  auto resp = check_cell<bp::JoinGroupResponse>(req, v);
  if (resp.error_code == 79) {
    req.member_id = resp.member_id;
    resp = check_cell<bp::JoinGroupResponse>(req, v);
  }
  expect(resp.error_code == 0, "JoinGroup: error " + std::to_string(resp.error_code));
  expect(resp.members.size() == 1, "JoinGroup: leader should see 1 member");
  if (v >= 5) {
    // Complete the generation, then rejoin as the same static member with no member id:
    // the static leader's rejoin (skip_assignment from v9).
    bp::SyncGroupRequest sync;
    sync.group_id = group;
    sync.generation_id = resp.generation_id;
    sync.member_id = resp.member_id;
    sync.group_instance_id = req.group_instance_id;
    auto sresp = exchange_new<bp::SyncGroupResponse>(sync, 3);
    expect(sresp.error_code == 0, "JoinGroup: SyncGroup error " + std::to_string(sresp.error_code));
    bp::JoinGroupRequest rejoin = req;
    rejoin.member_id.clear();
    auto r3 = check_cell<bp::JoinGroupResponse>(rejoin, v);
    expect(r3.error_code == 0, "JoinGroup: static rejoin error " + std::to_string(r3.error_code));
    req.member_id = r3.member_id;
  }
  // A second member without an id: MEMBER_ID_REQUIRED (v4+) or a join that waits; only
  // the first kind is bounded, so only for v4+ and without a static instance id.
  if (v >= 4) {
    bp::JoinGroupRequest second = req;
    second.member_id.clear();
    second.group_instance_id = std::nullopt;
    auto r2 = check_cell<bp::JoinGroupResponse>(second, v);
    expect(r2.error_code == 79, "JoinGroup: second member expected MEMBER_ID_REQUIRED, got " +
                                    std::to_string(r2.error_code));
  }
}

void cell_heartbeat(int16_t v) {
  std::string group = vname("matrix-hb", v);
  auto [member, gen] = join_group(group);
  bp::HeartbeatRequest req;
  req.group_id = group;
  req.generation_id = gen;
  req.member_id = member;
  auto resp = check_cell<bp::HeartbeatResponse>(req, v);
  expect(resp.error_code == 0, "Heartbeat: error " + std::to_string(resp.error_code));
  bp::HeartbeatRequest bad = req;
  bad.member_id = "no-such-member";
  auto r2 = check_cell<bp::HeartbeatResponse>(bad, v);
  expect(r2.error_code != 0, "Heartbeat: unknown member accepted");
}

void cell_leave_group(int16_t v) {
  std::string group = vname("matrix-lg", v);
  auto [member, gen] = join_group(group);
  bp::LeaveGroupRequest req;
  req.group_id = group;
  if (v <= 2) {
    req.member_id = member;
  } else {
    bp::LeaveGroupRequest::MemberIdentity m, unknown;
    m.member_id = member;
    unknown.member_id = "no-such-member";
    if (v >= 5) m.reason = "matrix";
    req.members = {m, unknown};
  }
  auto resp = check_cell<bp::LeaveGroupResponse>(req, v);
  if (v >= 3) expect(resp.members.size() == 2, "LeaveGroup: 2 members expected");
}

void cell_sync_group(int16_t v) {
  std::string group = vname("matrix-sg", v);
  auto [member, gen] = join_group(group);
  bp::SyncGroupRequest req;
  req.group_id = group;
  req.generation_id = gen;
  req.member_id = member;
  if (v >= 5) {
    req.protocol_type = "consumer";
    req.protocol_name = "range";
  }
  bp::SyncGroupRequest::SyncGroupRequestAssignment a;
  a.member_id = member;
  a.assignment = Bytes(3, std::byte{7});
  req.assignments.push_back(a);
  auto resp = check_cell<bp::SyncGroupResponse>(req, v);
  expect(resp.error_code == 0, "SyncGroup: error " + std::to_string(resp.error_code));
  bp::SyncGroupRequest bad = req;
  bad.generation_id = gen + 5;
  check_cell<bp::SyncGroupResponse>(bad, v);
}

void cell_describe_groups(int16_t v) {
  std::string group = vname("matrix-dg", v);
  join_group(group);
  bp::DescribeGroupsRequest req;
  req.groups = {group, "matrix-no-such-group"};
  if (v >= 3) req.include_authorized_operations = true;
  auto resp = check_cell<bp::DescribeGroupsResponse>(req, v);
  expect(resp.groups.size() == 2, "DescribeGroups: 2 groups expected");
  expect(resp.groups[0].members.size() == 1, "DescribeGroups: 1 member expected");
  // KIP-1043: from v6 an unknown group is an error, before it a Dead group.
  if (v >= 6) expect(resp.groups[1].error_code == 69, "DescribeGroups: GROUP_ID_NOT_FOUND expected");
  else expect(resp.groups[1].error_code == 0 && resp.groups[1].group_state == "Dead", "DescribeGroups: Dead expected");
}

void cell_list_groups(int16_t v) {
  bp::ListGroupsRequest req;
  check_cell<bp::ListGroupsResponse>(req, v);
  if (v >= 4) {
    bp::ListGroupsRequest f;
    f.states_filter = {"Stable", "Empty"};
    if (v >= 5) f.types_filter = {"classic"};
    check_cell<bp::ListGroupsResponse>(f, v);
  }
}

void cell_delete_groups(int16_t v) {
  std::string empty = vname("matrix-dlg", v), live = vname("matrix-dlgl", v);
  commit_offset(empty, 1);
  join_group(live);
  bp::DeleteGroupsRequest req;
  req.groups_names = {empty, live, "matrix-no-such-group"};
  auto resp = check_cell<bp::DeleteGroupsResponse>(req, v);
  expect(resp.results.size() == 3, "DeleteGroups: 3 results expected");
  expect(resp.results[0].error_code == 0, "DeleteGroups: error " + std::to_string(resp.results[0].error_code));
}

void cell_offset_delete(int16_t v) {
  std::string group = vname("matrix-od", v);
  commit_offset(group, 1);
  bp::OffsetDeleteRequest req;
  req.group_id = group;
  bp::OffsetDeleteRequest::OffsetDeleteRequestTopic t;
  t.name = kTopic;
  bp::OffsetDeleteRequest::OffsetDeleteRequestPartition p0, p99;
  p0.partition_index = 0;
  p99.partition_index = 99;
  t.partitions = {p0, p99};
  req.topics.push_back(t);
  auto resp = check_cell<bp::OffsetDeleteResponse>(req, v);
  expect(resp.error_code == 0, "OffsetDelete: error " + std::to_string(resp.error_code));
  bp::OffsetDeleteRequest missing = req;
  missing.group_id = "matrix-no-such-group";
  check_cell<bp::OffsetDeleteResponse>(missing, v);
}

}  // namespace api_matrix
