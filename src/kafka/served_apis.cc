#include "kafka/served_apis.h"

#include <algorithm>

namespace brokerd::kafka {
namespace {

// Minimum: the oldest version Kafka 4.0 brokers still accept (KIP-896).
// Maximum: at least the newest version Kafka 3.9 brokers serve.
constexpr ServedApi kServed[] = {
    {0, 3, 11},   // Produce
    {1, 4, 17},   // Fetch
    {2, 1, 9},    // ListOffsets
    {3, 0, 12},   // Metadata
    {18, 0, 4},   // ApiVersions
    {19, 2, 7},   // CreateTopics
    {20, 1, 6},   // DeleteTopics
    {21, 0, 2},   // DeleteRecords
    {32, 1, 4},   // DescribeConfigs
    {33, 0, 2},   // AlterConfigs
    {37, 0, 3},   // CreatePartitions
    {44, 0, 1},   // IncrementalAlterConfigs
    {60, 0, 1},   // DescribeCluster
};

}  // namespace

std::span<const ServedApi> served_apis() { return kServed; }

const ServedApi* find_served_api(int16_t api_key) {
  auto it = std::find_if(std::begin(kServed), std::end(kServed), [&](const ServedApi& a) { return a.api_key == api_key; });
  return it == std::end(kServed) ? nullptr : &*it;
}

}  // namespace brokerd::kafka
