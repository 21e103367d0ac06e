// Regression suite entries: names that stay in the folder, known keys, string overrides.
#include "tools/config/suite_config.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "tools/config/json_file.hpp"
#include "tools/config/keys/suite_keys.hpp"

namespace hopsim::config {

SuiteEntry parse_suite_entry(const Node& suite, const std::string& name, const std::string& dir) {
  namespace sk = keys::suite;
  const Node at = suite.at(name);
  if (name.empty() || name.find('/') != std::string::npos) {
    at.fail(fmt::format("the name \"{}\" names the expected report NAME.json beside suite.json, "
                        "so it must be a file name: {}",
                        echo(name, 60), name.empty() ? "not empty" : "no \"/\""));
  }
  at.expect_object();
  at.allow_only(sk::kSection);
  SuiteEntry entry{name, (std::filesystem::path(dir) / at.read(sk::kExperiment)).string(), {}};
  if (at.has(sk::kSet)) {
    const Node set = at.at(sk::kSet);
    if (!set.is_array()) {
      set.fail(fmt::format("expected an array of \"KEY=VALUE\" strings, got {}",
                           set.json().type_name()));
    }
    for (std::size_t i = 0; i < set.size(); ++i) {
      if (!set.json()[i].is_string()) {
        set.at(i).fail("expected a string \"KEY=VALUE\"");
      }
      entry.sets.push_back(set.json()[i].get<std::string>());
    }
  }
  if (const std::string problem = file_problem(entry.experiment); !problem.empty()) {
    at.at(sk::kExperiment)
        .fail(fmt::format("experiment file \"{}\": {}", echo(entry.experiment, 200), problem));
  }
  return entry;
}

}  // namespace hopsim::config
