#include "brokerd/metadata/metadata_store.h"
#include "brokerd/config/broker_config.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

int32_t withheld_leader(const Services& services) {
  return services.metadata.image_current(services.config.integer("broker.session.timeout.ms")) ? -2 : services.node_id;
}

}  // namespace brokerd::kafka
