// `sable key`: the driver's signing key pair (docs/cache.md, "Keys"), created when missing, and the
// path of its public half, which a device is provisioned with (`sable-simd --trusted-key`, a
// board's SABLE_FW_TRUSTED_KEYS, a guest's cards). The device server never creates it: only the
// driver holds the private half.
#include <iostream>

#include "commands.h"
#include "sable/crypto/crypto.h"
#include "sable/umd/signing.h"

namespace sable::tools {

CommandRunner addKeyCommand(CLI::App& app) {
  app.add_subcommand("key",
                     "Create the driver's signing key if missing ($SABLE_KEY_DIR, $XDG_DATA_HOME/sable or "
                     "~/.local/share/sable) and print the path of its public key file");
  return [] {
    auto key = umd::SigningKey::processKey();
    if (!key.ok()) {
      std::cerr << "sable key: " << key.error().message << "\n";
      return 1;
    }
    std::string error;
    const auto directory = crypto::defaultKeyDirectory(error);
    if (!directory) {
      std::cerr << "sable key: " << error << "\n";
      return 1;
    }
    std::cout << (*directory / crypto::kPublicKeyFileName).string() << "\n";
    return 0;
  };
}

}  // namespace sable::tools
