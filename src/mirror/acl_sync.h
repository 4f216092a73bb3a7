#pragma once
// The controller's copy of a link's ACLs: the source's bindings on what the link mirrors —
// its topics (a PREFIXED binding only when every topic it can match is mirrored: its prefix
// extends one of the link's topic prefixes and no excluded topic starts with it) and the
// groups whose offsets it copies — created here, so that after a failover each team reads
// and writes its mirrored topics with the rights it had. Bindings on the cluster, on
// transactional ids, and literal "*" bindings on topics are not copied.
//
// A copy's id derives from the link's id and the binding, so the link knows its own copies:
// it removes them when the source no longer has them, and never touches a binding created
// here by hand (one equal to a source binding is kept, and not copied twice).
#include <string>

#include "brokerd/acl/acl.h"
#include "brokerd/metadata/mirror_link.h"
#include "source_cluster.h"

namespace brokerd::metadata {
class MetadataStore;
}  // namespace brokerd::metadata

namespace brokerd::mirror {

// Whether the link copies source binding `b`.
bool copies_acl(const metadata::MirrorLink& link, const acl::Binding& b);
// The id of the link's copy of `b` (stable across nodes and releases).
protocol::Uuid copy_id(const protocol::Uuid& link, const acl::Binding& b);

// One pass: reads the source's ACLs (DescribeAcls) and makes this cluster's copies match.
// Returns the problem, or an empty string. Blocks: run it on the controller's link thread.
std::string sync_acls(const metadata::MirrorLink& link, const SourceMetadata& source, SourceCluster& client,
                      metadata::MetadataStore& store);

}  // namespace brokerd::mirror
