#include "brokerd/controller/image_progress.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "brokerd/metadata/metadata_store.h"
#include "brokerd/common/clock.h"

namespace brokerd::controller {
namespace {

using namespace std::chrono_literals;

// The store applies committed entries up to `offset` (control entries: nothing but the offset).
void apply_up_to(metadata::MetadataStore& store, int64_t offset) {
  raft::Entry e;
  e.offset = offset;
  e.control = true;
  store.apply({e});
}

TEST(ImageProgress, FollowsThePublishedImages) {
  metadata::MetadataStore store("cluster-x", 1);
  ImageProgress progress(store);
  EXPECT_EQ(progress.applied(), -1);
  EXPECT_TRUE(progress.wait_until_holds(0, steady_clock_ms()));  // nothing below offset 0
  apply_up_to(store, 6);
  EXPECT_EQ(progress.applied(), 6);
  EXPECT_TRUE(progress.wait_until_holds(7, steady_clock_ms()));
  EXPECT_FALSE(progress.wait_until_holds(8, steady_clock_ms()));
}

TEST(ImageProgress, StartsFromTheImageAlreadyPublished) {
  metadata::MetadataStore store("cluster-x", 1);
  apply_up_to(store, 3);
  ImageProgress progress(store);
  EXPECT_EQ(progress.applied(), 3);
}

TEST(ImageProgress, AWaitEndsWhenTheImageArrives) {
  metadata::MetadataStore store("cluster-x", 1);
  ImageProgress progress(store);
  apply_up_to(store, 1);
  std::thread later([&] {
    std::this_thread::sleep_for(30ms);
    apply_up_to(store, 2);  // not enough yet
    std::this_thread::sleep_for(30ms);
    apply_up_to(store, 9);
  });
  const int64_t started = steady_clock_ms();
  EXPECT_TRUE(progress.wait_until_holds(5, started + 10'000));
  EXPECT_LT(steady_clock_ms() - started, 5'000);
  later.join();
}

TEST(ImageProgress, AWaitEndsAtItsDeadline) {
  metadata::MetadataStore store("cluster-x", 1);
  ImageProgress progress(store);
  const int64_t started = steady_clock_ms();
  EXPECT_FALSE(progress.wait_until_holds(5, started + 50));
  EXPECT_GE(steady_clock_ms() - started, 50);
}

TEST(ImageProgress, StopEndsEveryWait) {
  metadata::MetadataStore store("cluster-x", 1);
  ImageProgress progress(store);
  std::thread stopper([&] {
    std::this_thread::sleep_for(30ms);
    progress.stop();
  });
  const int64_t started = steady_clock_ms();
  EXPECT_FALSE(progress.wait_until_holds(5, started + 10'000));
  EXPECT_LT(steady_clock_ms() - started, 5'000);
  stopper.join();
  EXPECT_FALSE(progress.wait_until_holds(5, steady_clock_ms() + 10'000));  // at once
  apply_up_to(store, 4);
  EXPECT_TRUE(progress.wait_until_holds(5, steady_clock_ms() + 10'000));
}

}  // namespace
}  // namespace brokerd::controller
