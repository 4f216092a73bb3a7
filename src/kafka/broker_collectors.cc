#include "brokerd/kafka/broker_collectors.h"

#include <algorithm>
#include <map>
#include <string>

#include "brokerd/partitions/partition_manager.h"
#include "brokerd/group/group_coordinator.h"
#include "brokerd/metrics/registry.h"

namespace brokerd::kafka {
namespace {

using metrics::Label;
using metrics::TextWriter;

boost::asio::awaitable<void> collect(TextWriter& out, partitions::PartitionManager& pm, group::GroupCoordinator& gc) {
  auto stats = co_await pm.partition_stats();
  std::sort(stats.begin(), stats.end(), [](const auto& a, const auto& b) {
    return a.tp.topic != b.tp.topic ? a.tp.topic < b.tp.topic : a.tp.partition < b.tp.partition;
  });
  out.family("brokerd_partitions", "Partitions hosted by this node.", "gauge");
  out.sample("brokerd_partitions", {}, static_cast<double>(stats.size()));

  struct Column {
    const char* name;
    const char* help;
    double (*value)(const partitions::PartitionStats&);
  };
  static constexpr Column kColumns[] = {
      {"brokerd_log_size_bytes", "Bytes of the partition's segment files.",
       [](const partitions::PartitionStats& s) { return static_cast<double>(s.size_bytes); }},
      {"brokerd_log_segments", "Segments of the partition's log.",
       [](const partitions::PartitionStats& s) { return static_cast<double>(s.segments); }},
      {"brokerd_log_start_offset", "First offset of the partition's log.",
       [](const partitions::PartitionStats& s) { return static_cast<double>(s.log_start_offset); }},
      {"brokerd_log_end_offset", "Offset the partition's next record gets.",
       [](const partitions::PartitionStats& s) { return static_cast<double>(s.log_end_offset); }},
  };
  std::map<std::pair<std::string, int32_t>, int64_t> high_watermarks;
  for (const auto& c : kColumns) {
    out.family(c.name, c.help, "gauge");
    for (const auto& s : stats) {
      std::string partition = std::to_string(s.tp.partition);
      const Label labels[] = {{"topic", s.tp.topic}, {"partition", partition}};
      out.sample(c.name, labels, c.value(s));
    }
  }
  for (const auto& s : stats) high_watermarks[{s.tp.topic, s.tp.partition}] = s.high_watermark;
  out.family("brokerd_high_watermark", "Offset below which every in-sync replica has the partition's records.", "gauge");
  for (const auto& s : stats) {
    std::string partition = std::to_string(s.tp.partition);
    const Label labels[] = {{"topic", s.tp.topic}, {"partition", partition}};
    out.sample("brokerd_high_watermark", labels, static_cast<double>(s.high_watermark));
  }
  // Transactions: how far read_committed consumers trail read_uncommitted ones.
  out.family("brokerd_last_stable_offset_lag",
             "High watermark minus last stable offset of partitions led here: records an open transaction holds "
             "back from read_committed consumers.",
             "gauge");
  for (const auto& s : stats) {
    if (!s.leader) continue;
    std::string partition = std::to_string(s.tp.partition);
    const Label labels[] = {{"topic", s.tp.topic}, {"partition", partition}};
    out.sample("brokerd_last_stable_offset_lag", labels,
               static_cast<double>(std::max<int64_t>(0, s.high_watermark - s.last_stable_offset)));
  }
  // Replication health of the partitions this node leads.
  int64_t leading = 0, under_replicated = 0, under_min_isr = 0;
  for (const auto& s : stats) {
    if (!s.leader) continue;
    ++leading;
    under_replicated += s.isr < s.replicas ? 1 : 0;
    under_min_isr += s.isr < s.min_isr ? 1 : 0;
  }
  out.family("brokerd_leader_partitions", "Partitions this node leads.", "gauge");
  out.sample("brokerd_leader_partitions", {}, static_cast<double>(leading));
  out.family("brokerd_under_replicated_partitions", "Partitions led here whose ISR is smaller than their replica set.", "gauge");
  out.sample("brokerd_under_replicated_partitions", {}, static_cast<double>(under_replicated));
  out.family("brokerd_under_min_isr_partitions",
             "Partitions led here whose ISR is below min.insync.replicas: acks=all is refused.", "gauge");
  out.sample("brokerd_under_min_isr_partitions", {}, static_cast<double>(under_min_isr));

  // Groups: lag is the high watermark minus the committed offset, per committed partition.
  auto listed = co_await gc.list();
  out.family("brokerd_groups", "Consumer groups known to this node's coordinator.", "gauge");
  out.sample("brokerd_groups", {}, static_cast<double>(listed.second.size()));
  out.family("brokerd_group_lag", "Records between a group's committed offset and the partition's high watermark.",
             "gauge");
  auto& listings = listed.second;
  std::sort(listings.begin(), listings.end(), [](const auto& a, const auto& b) { return a.group_id < b.group_id; });
  for (const auto& g : listings) {
    auto fetched = co_await gc.fetch(g.group_id, std::nullopt);
    if (fetched.error != group::ErrorCode::none) continue;
    for (const auto& o : fetched.offsets) {
      if (o.entry.offset < 0) continue;
      auto it = high_watermarks.find({o.key.topic, o.key.partition});
      if (it == high_watermarks.end()) continue;
      std::string partition = std::to_string(o.key.partition);
      const Label labels[] = {{"group", g.group_id}, {"topic", o.key.topic}, {"partition", partition}};
      out.sample("brokerd_group_lag", labels, static_cast<double>(std::max<int64_t>(it->second - o.entry.offset, 0)));
    }
  }
}

}  // namespace

void register_broker_collectors(metrics::Registry& registry, partitions::PartitionManager& partitions,
                                group::GroupCoordinator& groups) {
  auto collector = [&partitions, &groups](TextWriter& out) { return collect(out, partitions, groups); };
  registry.collector(std::move(collector));
}

}  // namespace brokerd::kafka
