#include "brokerd/partitions/mirror_status.h"
#include "brokerd/common/clock.h"
#include "brokerd/kafka/broker_collectors.h"
#include "brokerd/metrics/registry.h"
#include "brokerd/metrics/text_format.h"

namespace brokerd::kafka {

void register_mirror_collectors(metrics::Registry& registry, const partitions::MirrorStatus& status) {
  registry.sync_collector([&status](metrics::TextWriter& out) {
    const auto links = status.links();
    const auto parts = status.partitions();
    if (links.empty() && parts.empty()) return;
    const int64_t now = wall_clock_ms();
    out.family("brokerd_mirror_link_up", "1 while the mirror link reaches its source (as this node sees it), else 0.",
               "gauge");
    for (const auto& [name, s] : links) out.sample("brokerd_mirror_link_up", {{"link", name}}, s.state == "active" ? 1 : 0);
    out.family("brokerd_mirror_partition_lag_records",
               "Records the source's high watermark is ahead of the mirror partition this node leads.", "gauge");
    for (const auto& e : parts) {
      const std::string p = std::to_string(e.tp.partition);
      out.sample("brokerd_mirror_partition_lag_records", {{"link", e.link}, {"topic", e.tp.topic}, {"partition", p}},
                 static_cast<double>(e.state.lag_records()));
    }
    out.family("brokerd_mirror_partition_lag_seconds",
               "How far behind the source the mirror partition is in time: everything the source held this long ago "
               "is mirrored (the recovery point; 0 while caught up).",
               "gauge");
    for (const auto& e : parts) {
      const std::string p = std::to_string(e.tp.partition);
      out.sample("brokerd_mirror_partition_lag_seconds", {{"link", e.link}, {"topic", e.tp.topic}, {"partition", p}},
                 static_cast<double>(std::max<int64_t>(0, e.state.lag_ms(now))) / 1000.0);
    }
    out.family("brokerd_mirror_partition_skipped_records",
               "Records the source deleted (retention) before the mirror copied them.", "gauge");
    for (const auto& e : parts) {
      const std::string p = std::to_string(e.tp.partition);
      out.sample("brokerd_mirror_partition_skipped_records", {{"link", e.link}, {"topic", e.tp.topic}, {"partition", p}},
                 static_cast<double>(e.state.skipped_records));
    }
    out.family("brokerd_mirror_partition_copied_bytes",
               "Bytes of record batches copied from the source since this node began leading the partition.", "gauge");
    for (const auto& e : parts) {
      const std::string p = std::to_string(e.tp.partition);
      out.sample("brokerd_mirror_partition_copied_bytes", {{"link", e.link}, {"topic", e.tp.topic}, {"partition", p}},
                 static_cast<double>(e.state.bytes_copied));
    }
  });
}

}  // namespace brokerd::kafka
