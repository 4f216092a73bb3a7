#pragma once
// Offsets shared by consume and groups: log offsets by ListOffsets (to each partition's
// leader), and a group's committed offsets by OffsetFetch / OffsetCommit (to its coordinator).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "brokerctl/client.h"

namespace brokerctl {

using TopicPartition = std::pair<std::string, int32_t>;

constexpr int64_t kLatest = -1;
constexpr int64_t kEarliest = -2;

// For each partition, the offset for `timestamp` (kLatest, kEarliest or milliseconds; -1
// when no record is that recent). Per-partition errors throw CommandError.
std::map<TopicPartition, int64_t> list_offsets(Client& client, const std::vector<TopicPartition>& partitions,
                                               int64_t timestamp);

// The group's committed offsets (-1 = none) for `topics`, or for every topic when empty.
std::map<TopicPartition, int64_t> fetch_committed(Client& client, const std::string& group,
                                                  const std::vector<std::string>& topics = {});

// Commits as an admin would: no member id, generation -1 (the group must have no members).
void commit_offsets(Client& client, const std::string& group, const std::map<TopicPartition, int64_t>& offsets);

// The partitions of a topic, sorted; CommandError when the topic does not exist.
std::vector<int32_t> topic_partitions(Client& client, const std::string& topic);

}  // namespace brokerctl
