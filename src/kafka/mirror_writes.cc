#include "kafka/mirror_writes.h"

#include <fmt/format.h>

namespace brokerd::kafka {

std::optional<MirrorWriteRefusal> refuse_mirror_write(std::string_view topic, std::string_view link) {
  if (link.empty()) return std::nullopt;
  return MirrorWriteRefusal{protocol::ErrorCode::invalid_request,
                            fmt::format("Topic {} is a mirror of link {} and is read-only until the link promotes it.",
                                        topic, link)};
}

}  // namespace brokerd::kafka
