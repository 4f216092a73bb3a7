#pragma once
#include <cstdint>
#include <functional>
#include <string>

namespace brokerd::partitions {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;
  bool operator==(const TopicPartition&) const = default;
  // Kafka's directory name: "<topic>-<partition>".
  std::string dir_name() const { return topic + "-" + std::to_string(partition); }
};

}  // namespace brokerd::partitions

template <>
struct std::hash<brokerd::partitions::TopicPartition> {
  size_t operator()(const brokerd::partitions::TopicPartition& tp) const noexcept {
    return std::hash<std::string>{}(tp.topic) * 31 + static_cast<size_t>(tp.partition);
  }
};
