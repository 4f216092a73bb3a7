#pragma once
// One named spdlog logger per module; set up once in main by init_logging().
#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace brokerd {

// Returns the logger for a module ("net", "storage", ...), created on first use.
std::shared_ptr<spdlog::logger> module_logger(const std::string& name);

// Sets the level of every module logger ("trace" .. "off").
void init_logging(const std::string& level);

}  // namespace brokerd
