#pragma once
// The controller's copy of consumer positions: the committed offsets of the link's groups on
// the source, for the link's mirror topics, committed here as an admin commit (generation
// -1), which the group coordinator accepts only while the group has no members here: a
// group that already moved to this cluster keeps its own positions. An offset is never
// committed past what the mirror holds (it is lowered to the mirror's high watermark), so
// a group that fails over re-reads rather than skips.
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "brokerd/metadata/metadata_image.h"
#include "source_cluster.h"

namespace brokerd::mirror {

// What the last pass committed, so that unchanged offsets are not written again.
using CommittedOffsets = std::map<std::tuple<std::string, std::string, int32_t>, int64_t>;  // group, topic, partition

struct OffsetSyncResult {
  int32_t groups_synced = 0;  // groups whose offsets are in step here
  std::string problem;        // the first thing that went wrong, if anything did
};

// `here` speaks to this cluster's own brokers (their client listeners).
OffsetSyncResult sync_offsets(const metadata::MirrorLink& link, const SourceMetadata& source, SourceCluster& client,
                              SourceCluster& here, const metadata::MetadataImage& image, CommittedOffsets& committed);

}  // namespace brokerd::mirror
