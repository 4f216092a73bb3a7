#include "brokerctl/offsets.h"

#include <algorithm>

namespace brokerctl {

std::vector<int32_t> topic_partitions(Client& client, const std::string& topic) {
  auto t = client.topic(topic);
  std::vector<int32_t> ids;
  for (const auto& p : t.partitions) ids.push_back(p.partition_index);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::map<TopicPartition, int64_t> list_offsets(Client& client, const std::vector<TopicPartition>& partitions,
                                               int64_t timestamp) {
  std::map<TopicPartition, int64_t> out;
  if (partitions.empty()) return out;
  std::vector<std::string> topics;
  for (const auto& [t, p] : partitions) {
    if (std::find(topics.begin(), topics.end(), t) == topics.end()) topics.push_back(t);
  }
  auto md = client.metadata(topics);
  std::map<TopicPartition, int32_t> leader;
  for (const auto& t : md.topics) {
    for (const auto& p : t.partitions) leader[{t.name.value_or(""), p.partition_index}] = p.leader_id;
  }
  std::map<int32_t, std::vector<TopicPartition>> by_leader;
  for (const auto& tp : partitions) {
    auto it = leader.find(tp);
    if (it == leader.end()) {
      throw CommandError("partition " + tp.first + "-" + std::to_string(tp.second) + ": UNKNOWN_TOPIC_OR_PARTITION");
    }
    if (it->second < 0) {
      throw CommandError("partition " + tp.first + "-" + std::to_string(tp.second) + ": LEADER_NOT_AVAILABLE");
    }
    by_leader[it->second].push_back(tp);
  }
  for (const auto& [node, tps] : by_leader) {
    proto::ListOffsetsRequest req;
    req.replica_id = -1;
    for (const auto& [t, p] : tps) {
      auto it = std::find_if(req.topics.begin(), req.topics.end(), [&](const auto& x) { return x.name == t; });
      if (it == req.topics.end()) {
        req.topics.emplace_back();
        req.topics.back().name = t;
        it = req.topics.end() - 1;
      }
      proto::ListOffsetsRequest::ListOffsetsPartition lp;
      lp.partition_index = p;
      lp.timestamp = timestamp;
      it->partitions.push_back(lp);
    }
    auto resp = client.node(node).call<proto::ListOffsetsResponse>(req);
    for (const auto& t : resp.topics) {
      for (const auto& p : t.partitions) {
        check_error(p.error_code, "listing offsets of " + t.name + "-" + std::to_string(p.partition_index));
        out[{t.name, p.partition_index}] = p.offset;
      }
    }
  }
  return out;
}

std::map<TopicPartition, int64_t> fetch_committed(Client& client, const std::string& group,
                                                  const std::vector<std::string>& topics) {
  auto& conn = client.coordinator(group);
  // v2+ answers "all topics" for a null topic list.
  // v10 names topics by id; brokerctl names them.
  int16_t v = conn.pick_version(proto::OffsetFetchRequest::api_key, 2, 9);
  proto::OffsetFetchRequest req;
  proto::OffsetFetchRequest::OffsetFetchRequestGroup g;
  g.group_id = group;
  if (topics.empty()) {
    req.topics = std::nullopt;
    g.topics = std::nullopt;
  } else {
    req.topics.emplace();
    g.topics.emplace();
    for (const auto& t : topics) {
      auto parts = topic_partitions(client, t);
      proto::OffsetFetchRequest::OffsetFetchRequestTopic rt;
      rt.name = t;
      rt.partition_indexes = parts;
      req.topics->push_back(rt);
      proto::OffsetFetchRequest::OffsetFetchRequestTopics gt;
      gt.name = t;
      gt.partition_indexes = parts;
      g.topics->push_back(gt);
    }
  }
  // v8+ batches groups; earlier versions name one group at the top level.
  if (v >= 8) {
    req.groups = {g};
    req.topics = std::vector<proto::OffsetFetchRequest::OffsetFetchRequestTopic>{};
  } else {
    req.group_id = group;
  }
  auto resp = conn.call_version<proto::OffsetFetchResponse>(req, v);
  std::map<TopicPartition, int64_t> out;
  std::string what = "fetching committed offsets of group '" + group + "'";
  if (v >= 8) {
    if (resp.groups.empty()) throw CommandError(what + ": empty response");
    const auto& rg = resp.groups.front();
    check_error(rg.error_code, what);
    for (const auto& t : rg.topics) {
      for (const auto& p : t.partitions) {
        check_error(p.error_code, what + " (" + t.name + "-" + std::to_string(p.partition_index) + ")");
        out[{t.name, p.partition_index}] = p.committed_offset;
      }
    }
  } else {
    check_error(resp.error_code, what);
    for (const auto& t : resp.topics) {
      for (const auto& p : t.partitions) {
        check_error(p.error_code, what + " (" + t.name + "-" + std::to_string(p.partition_index) + ")");
        out[{t.name, p.partition_index}] = p.committed_offset;
      }
    }
  }
  return out;
}

void commit_offsets(Client& client, const std::string& group, const std::map<TopicPartition, int64_t>& offsets) {
  if (offsets.empty()) return;
  auto& conn = client.coordinator(group);
  proto::OffsetCommitRequest req;
  req.group_id = group;
  req.generation_id_or_member_epoch = -1;
  req.member_id = "";
  for (const auto& [tp, offset] : offsets) {
    if (req.topics.empty() || req.topics.back().name != tp.first) {
      req.topics.emplace_back();
      req.topics.back().name = tp.first;
    }
    proto::OffsetCommitRequest::OffsetCommitRequestPartition p;
    p.partition_index = tp.second;
    p.committed_offset = offset;
    p.committed_metadata = "";
    req.topics.back().partitions.push_back(p);
  }
  auto resp = conn.call<proto::OffsetCommitResponse>(req, int16_t(9));  // v10 names topics by id
  for (const auto& t : resp.topics) {
    for (const auto& p : t.partitions) {
      check_error(p.error_code, "committing offsets of group '" + group + "' (" + t.name + "-" +
                                    std::to_string(p.partition_index) + ")");
    }
  }
}

}  // namespace brokerctl
