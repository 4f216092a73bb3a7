#pragma once
// IncrementalAlterConfigs while the active controller is of an older release that does not
// serve it on its listener (during a rolling upgrade): the operations are applied here, to
// the configs this node's image holds, and the resulting set is written whole (AlterConfigs
// to the controller), as that release's brokers did. Two such changes of one resource made
// at once through different brokers may then overwrite each other, until the controller is
// upgraded.
#include <boost/asio/awaitable.hpp>

#include "brokerd/protocol/messages/incremental_alter_configs_request.h"
#include "kafka/handlers/config_resources.h"

namespace brokerd::kafka {

struct HandlerContext;

// Whether the quorum's leader serves IncrementalAlterConfigs (ControllerChannel::leader_serves:
// ApiVersions at most once a minute per controller; true when it cannot tell).
boost::asio::awaitable<bool> controller_takes_increments(HandlerContext& ctx);

// One resource (checked and authorized) changed the older way.
boost::asio::awaitable<ConfigResult> apply_increments_here(
    Services& svc, const protocol::IncrementalAlterConfigsRequest::AlterConfigsResource& res, bool validate_only);

}  // namespace brokerd::kafka
