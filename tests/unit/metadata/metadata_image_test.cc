#include "brokerd/metadata/metadata_image.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

namespace {

using brokerd::metadata::MetadataImage;
using brokerd::metadata::TopicMetadata;
using brokerd::metadata::TopicPtr;

TopicPtr topic(const std::string& name, int partitions = 1) {
  auto t = std::make_shared<TopicMetadata>();
  t->name = name;
  t->id = brokerd::protocol::Uuid::random();
  t->partitions.resize(static_cast<size_t>(partitions));
  return t;
}

TEST(MetadataImage, FindsTopicsByNameAndId) {
  MetadataImage image;
  std::vector<TopicPtr> all;
  for (int i = 0; i < 5000; ++i) {
    all.push_back(topic("t" + std::to_string(i)));
    image.put_topic(all.back());
  }
  EXPECT_EQ(image.topic_count(), 5000u);
  for (const auto& t : all) {
    EXPECT_EQ(image.topic(t->name), t.get());
    EXPECT_EQ(image.topic(t->id), t.get());
  }
  size_t seen = 0;
  image.for_each_topic([&](const TopicPtr&) { ++seen; });
  EXPECT_EQ(seen, 5000u);
  image.remove_topic("t17");
  EXPECT_EQ(image.topic("t17"), nullptr);
  EXPECT_EQ(image.topic(all[17]->id), nullptr);
  EXPECT_EQ(image.topic_count(), 4999u);
}

TEST(MetadataImage, ChangedTopicsAreExactlyTheOnesThatChanged) {
  MetadataImage before;
  for (int i = 0; i < 3000; ++i) before.put_topic(topic("t" + std::to_string(i)));
  MetadataImage after = before;  // shares every bucket
  int calls = 0;
  after.for_each_changed_topic(before, [&](const TopicPtr&, const TopicPtr&) { ++calls; });
  EXPECT_EQ(calls, 0);

  auto changed = std::make_shared<TopicMetadata>(*before.topic_ptr("t5"));
  changed->partitions.resize(3);
  after.put_topic(changed);
  after.remove_topic("t6");
  after.put_topic(topic("new"));
  auto recreated = topic("t7");  // same name, new id
  after.put_topic(recreated);

  std::set<std::string> created, removed, modified;
  after.for_each_changed_topic(before, [&](const TopicPtr& b, const TopicPtr& a) {
    if (!b) created.insert(a->name);
    else if (!a) removed.insert(b->name);
    else modified.insert(a->name);
  });
  EXPECT_EQ(created, std::set<std::string>{"new"});
  EXPECT_EQ(removed, std::set<std::string>{"t6"});
  EXPECT_EQ(modified, (std::set<std::string>{"t5", "t7"}));
  EXPECT_EQ(after.topic(recreated->id), recreated.get());
  EXPECT_EQ(after.topic(before.topic("t7")->id), nullptr);
  EXPECT_EQ(after.topic_count(), 3000u);
  EXPECT_EQ(before.topic("t6") != nullptr, true) << "the older image is unchanged";
}

}  // namespace
