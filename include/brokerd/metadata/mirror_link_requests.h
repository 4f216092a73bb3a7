#pragma once
// The mirror-link APIs that change metadata, as the active controller answers them (other
// brokers forward them): CreateMirrorLinks, AlterMirrorLinks, PromoteMirrorTopics. These
// are brokerd's own APIs (proto/brokerd), in a key range Kafka does not use.
#include <cstdint>

#include "brokerd/protocol/messages/alter_mirror_links_request.h"
#include "brokerd/protocol/messages/alter_mirror_links_response.h"
#include "brokerd/protocol/messages/create_mirror_links_request.h"
#include "brokerd/protocol/messages/create_mirror_links_response.h"
#include "brokerd/protocol/messages/promote_mirror_topics_request.h"
#include "brokerd/protocol/messages/promote_mirror_topics_response.h"

namespace brokerd::metadata {

class MetadataStore;

inline constexpr int16_t kCreateMirrorLinks = 30000, kAlterMirrorLinks = 30001, kDescribeMirrorLinks = 30002,
                         kPromoteMirrorTopics = 30003;

// Each blocks until its changes commit: call them off the reactors.
protocol::CreateMirrorLinksResponse answer_create_mirror_links(MetadataStore& store,
                                                               const protocol::CreateMirrorLinksRequest& req);
protocol::AlterMirrorLinksResponse answer_alter_mirror_links(MetadataStore& store,
                                                             const protocol::AlterMirrorLinksRequest& req);
protocol::PromoteMirrorTopicsResponse answer_promote_mirror_topics(MetadataStore& store,
                                                                   const protocol::PromoteMirrorTopicsRequest& req);

}  // namespace brokerd::metadata
