#pragma once
// The APIs this broker serves and their version ranges: the single source for ApiVersions
// and for the dispatcher's version check. An API appears here only when it fully works.
#include <cstdint>
#include <span>

#include "kafka/handler.h"

namespace brokerd::kafka {

struct ServedApi {
  int16_t api_key;
  int16_t min_version;
  int16_t max_version;
  Handler handler;
};

std::span<const ServedApi> served_apis();
const ServedApi* find_served_api(int16_t api_key);

}  // namespace brokerd::kafka
