// AlterReplicaLogDirs: moves partitions of this node to another of its log dirs. Each move
// is started on the partition's home shard and runs on while the partition serves; the
// answer says it is under way, and DescribeLogDirs shows its progress as a future replica.
#include <filesystem>
#include <map>

#include "brokerd/partitions/partition_manager.h"
#include "brokerd/net/run_on.h"
#include "brokerd/protocol/messages/alter_replica_log_dirs_request.h"
#include "brokerd/protocol/messages/alter_replica_log_dirs_response.h"
#include "kafka/authorize.h"
#include "kafka/handler.h"

namespace brokerd::kafka {

using protocol::AlterReplicaLogDirsRequest;
using protocol::AlterReplicaLogDirsResponse;
using protocol::ErrorCode;
namespace fs = std::filesystem;

boost::asio::awaitable<net::Response> handle_alter_replica_log_dirs(HandlerContext& ctx) {
  auto req = ctx.decode<AlterReplicaLogDirsRequest>();
  auto& pm = ctx.services.partitions;
  const bool allowed = authorized_cluster(ctx, acl::Operation::alter);
  // Results by topic, in the order topics first appear.
  AlterReplicaLogDirsResponse resp;
  std::map<std::string, size_t> topic_slot;
  auto answer = [&](const std::string& topic, int32_t partition, ErrorCode e) {
    auto [it, fresh] = topic_slot.try_emplace(topic, resp.results.size());
    if (fresh) {
      resp.results.emplace_back();
      resp.results.back().topic_name = topic;
    }
    AlterReplicaLogDirsResponse::AlterReplicaLogDirPartitionResult r;
    r.partition_index = partition;
    r.error_code = protocol::code(e);
    resp.results[it->second].partitions.push_back(r);
  };
  for (const auto& dir : req.dirs) {
    // The path as configured: requests name it as DescribeLogDirs does (absolute).
    const fs::path* target = nullptr;
    const auto wanted = fs::absolute(dir.path).lexically_normal();
    for (const auto& d : pm.log_dirs())
      if (fs::absolute(d).lexically_normal() == wanted) target = &d;
    for (const auto& topic : dir.topics) {
      for (int32_t partition : topic.partitions) {
        if (!allowed) {
          answer(topic.name, partition, ErrorCode::cluster_authorization_failed);
        } else if (!target) {
          answer(topic.name, partition, ErrorCode::log_dir_not_found);
        } else {
          // Named, not a temporary of the co_await expression (see net/run_on.h on GCC 12).
          const partitions::TopicPartition tp{topic.name, partition};
          auto start = [&pm, tp, to = *target] { return pm.move_to_log_dir(tp, to); };
          const ErrorCode e = co_await net::run_on(pm.executor_of(tp), std::move(start));
          answer(topic.name, partition, e);
        }
      }
    }
  }
  co_return ctx.respond(resp);
}

}  // namespace brokerd::kafka
