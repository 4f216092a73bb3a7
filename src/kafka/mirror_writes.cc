#include "kafka/mirror_writes.h"

#include "brokerd/metadata/mirror_link.h"

namespace brokerd::kafka {

std::optional<MirrorWriteRefusal> refuse_mirror_write(std::string_view topic, std::string_view link) {
  if (link.empty()) return std::nullopt;
  return MirrorWriteRefusal{protocol::ErrorCode::invalid_request, metadata::read_only_mirror(topic, link)};
}

}  // namespace brokerd::kafka
