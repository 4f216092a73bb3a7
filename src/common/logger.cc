#include "brokerd/common/logger.h"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace brokerd {

std::shared_ptr<spdlog::logger> module_logger(const std::string& name) {
  if (auto existing = spdlog::get(name)) return existing;
  try {
    auto logger = spdlog::stderr_color_mt(name);
    logger->set_level(spdlog::get_level());
    return logger;
  } catch (const spdlog::spdlog_ex&) {
    return spdlog::get(name);  // created concurrently by another thread
  }
}

void init_logging(const std::string& level) {
  spdlog::set_level(spdlog::level::from_str(level));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %v");
  spdlog::apply_all([&](const std::shared_ptr<spdlog::logger>& l) { l->set_level(spdlog::get_level()); });
}

}  // namespace brokerd
