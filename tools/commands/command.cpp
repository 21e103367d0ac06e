// What the subcommands' declarations share.
#include "tools/commands/command.hpp"

#include "tools/config/experiment_file.hpp"

namespace hopsim::tools {

void append_unsets(std::vector<std::string>& overrides, const std::vector<std::string>& unset) {
  for (const std::string& key : unset) {
    overrides.push_back(config::unset_override(key));
  }
}

}  // namespace hopsim::tools
