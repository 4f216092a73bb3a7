#pragma once
// The controller's part of a mirror link: for every source topic the link names, a mirror
// topic here with the source's partition count (partitions added when the source adds
// them) and, with sync_configs, the source's topic overrides kept in step.
#include <cstdint>
#include <string>

#include "brokerd/metadata/mirror_link.h"
#include "brokerd/partitions/mirror_status.h"
#include "source_cluster.h"

namespace brokerd::metadata {
class MetadataStore;
}  // namespace brokerd::metadata

namespace brokerd::mirror {

// One pass for one link; the link's state as it leaves it (active, or why not). Blocks on
// the source and on metadata commits: run it on a thread of its own, on the controller.
partitions::LinkState sync_topics(const metadata::MirrorLink& link, const SourceMetadata& source, SourceCluster& client,
                               metadata::MetadataStore& store, int32_t replication_factor);

}  // namespace brokerd::mirror
