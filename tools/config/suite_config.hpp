// A regression suite's entries (DIR/suite.json, read by `hopsim regress`), checked one by one.
#pragma once

#include <string>
#include <vector>

#include "tools/config/node.hpp"

namespace hopsim::config {

/// One entry of a suite: its name, its experiment's path (the suite's folder joined with the
/// entry's relative path) and its overrides.
struct SuiteEntry {
  std::string name;
  std::string experiment;
  std::vector<std::string> sets;
};

/// Entry `name` of `suite` (the object suite.json holds, in folder `dir`), checked: a name that
/// is not a file name (NAME.json is written beside suite.json: no "/", not empty), a key other
/// than "experiment" and "set" (with "did you mean"), a "set" that is not an array of strings,
/// or an experiment file that cannot be read is a ConfigError at its JSON path.
SuiteEntry parse_suite_entry(const Node& suite, const std::string& name, const std::string& dir);

}  // namespace hopsim::config
