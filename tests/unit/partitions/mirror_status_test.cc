// How the progress of a mirror partition reads.
#include <gtest/gtest.h>

#include "brokerd/partitions/mirror_status.h"

namespace brokerd::partitions {
namespace {

TEST(MirrorStatus, LagIsTheTimeSinceTheMirrorLastHeldAllTheSourceHad) {
  PartitionMirrorState s;
  EXPECT_EQ(s.lag_records(), 0) << "nothing is known of the source yet";
  s.source_high_watermark = 100;
  s.mirrored_end = 100;
  s.caught_up_ms = 5000;
  EXPECT_EQ(s.lag_ms(9000), 0) << "caught up";
  s.source_high_watermark = 140;
  EXPECT_EQ(s.lag_records(), 40);
  EXPECT_EQ(s.lag_ms(9000), 4000);
  s.bytes_copied = 10000;
  s.records_copied = 100;
  EXPECT_EQ(s.lag_bytes(), 4000);

  MirrorStatus status;
  status.set_partition("l", {"t", 0}, s);
  status.set_partition("gone", {"t", 1}, s);
  status.set_link("l", LinkState{"active", "", 2});
  status.retain_links({"l"});
  EXPECT_TRUE(status.partition("l", {"t", 0}));
  EXPECT_FALSE(status.partition("gone", {"t", 1}));
  EXPECT_EQ(status.link("l").groups_synced, 2);
}

}  // namespace
}  // namespace brokerd::partitions
