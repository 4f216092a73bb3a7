#pragma once
// The key of the salts an unknown SCRAM user is answered with (auth::ScramDecoy), so that
// the answer is the same after a restart and, where possible, on every node: derived from
// password.encoder.secret when it is set (the same on every node), else a random key made
// at the first start and kept in the data directory (scram-decoy.key, mode 0600).
#include <filesystem>

#include "brokerd/auth/scram.h"

namespace brokerd::config { class BrokerConfig; }

namespace brokerd::security {

// Throws std::runtime_error when the key file can be neither read nor written.
auth::ScramDecoy scram_decoy(const config::BrokerConfig& cfg, const std::filesystem::path& data_dir);

}  // namespace brokerd::security
