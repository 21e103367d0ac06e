// Kernel rules from JSON (kernel_rules.hpp).
#include "tools/profile/kernel_rules.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "tools/config/json_file.hpp"
#include "tools/config/keys/kernel_rule_keys.hpp"
#include "tools/config/node.hpp"
#include "tools/config/presets.hpp"
#include "tools/profile/linear_regex.hpp"
#include "workloads/compute/kernel_class.hpp"

namespace hopsim::profile {

struct KernelRules::Compiled {
  std::vector<LinearRegex> expressions;  // one per rule
};

namespace {

using config::Node;
namespace rk = config::keys::kernel_rule;
namespace fk = config::keys::kernel_rules;

constexpr std::size_t kMaxRules = 10000;
constexpr std::size_t kMaxPattern = 1000;

std::vector<std::string> classes_of(const Node& rule) {
  const Node c = rule.at(rk::kClass);
  std::vector<Node> items;
  if (c.is_array()) {
    if (c.size() == 0) {
      c.fail("an empty list; name at least one class");
    }
    for (std::size_t i = 0; i < c.size(); ++i) {
      items.push_back(c.at(i));
    }
  } else {
    items.push_back(c);
  }
  std::vector<std::string> out;
  for (const Node& item : items) {
    std::string name = item.string();
    if (!known_class(name)) {
      item.fail(
          fmt::format("unknown class \"{}\"; a kernel class (gemm_fprop, ..., other), "
                      "nccl, deepep or unmodelled",
                      config::echo(name)));
    }
    if (items.size() > 1 && (communication_class(name) || name == kUnmodelled)) {
      item.fail(fmt::format("\"{}\" cannot share a rule with other classes", name));
    }
    out.push_back(std::move(name));
  }
  return out;
}

KernelRule rule_of(const Node& n, std::vector<LinearRegex>& compiled) {
  n.allow_only(rk::kSection);
  KernelRule r;
  r.classes = classes_of(n);
  const Node match = n.at(rk::kMatch);
  r.pattern = n.read(rk::kMatch);
  if (r.pattern.empty() || r.pattern.size() > kMaxPattern) {
    match.fail(fmt::format("an expression of 1 to {} characters", kMaxPattern));
  }
  try {
    compiled.emplace_back(r.pattern);
  } catch (const std::invalid_argument& e) {
    match.fail(fmt::format("not a regular expression hopsim matches ({})", e.what()));
  }
  (void)n.read_if(rk::kNote);
  return r;
}

}  // namespace

bool known_class(std::string_view name) {
  for (std::size_t k = 0; k < work::kKernelClasses; ++k) {
    if (work::kernel_class_name(static_cast<work::KernelClass>(k)) == name) {
      return true;
    }
  }
  return communication_class(name) || name == kUnmodelled;
}

bool communication_class(std::string_view name) {
  return name == kNccl || name == kDeepEp;
}

KernelRules KernelRules::read(const std::string& path) {
  const nlohmann::json json = config::read_json_file(path);
  const Node root(json, path);
  root.allow_only(fk::kSection);
  (void)root.read(fk::kSchema);
  (void)root.read_if(fk::kDescription);
  const Node rules = root.at(fk::kRules);
  rules.expect_array();
  if (rules.size() == 0 || rules.size() > kMaxRules) {
    rules.fail(fmt::format("1 to {} rules", kMaxRules));
  }
  KernelRules out;
  out.file_ = path;
  auto compiled = std::make_shared<Compiled>();
  for (std::size_t i = 0; i < rules.size(); ++i) {
    out.rules_.push_back(rule_of(rules.at(i), compiled->expressions));
  }
  out.compiled_ = std::move(compiled);
  return out;
}

std::string KernelRules::default_path() {
  for (const std::filesystem::path& root : config::preset_roots()) {
    const std::filesystem::path file = root / "profile" / "kernel-classes.json";
    if (std::filesystem::is_regular_file(file)) {
      return config::display_path(file);
    }
  }
  throw config::ConfigError(
      "profile-check: the shipped kernel rules (configs/profile/kernel-classes.json) are not "
      "found; give them with --rules FILE");
}

std::size_t KernelRules::match(const std::string& name) const {
  if (const auto it = cache_.find(name); it != cache_.end()) {
    return it->second;
  }
  // A name is matched on its first kMaxMatchedName characters (DeepSeek's longest is 1,464):
  // the time of a search grows with the name times the pattern's states.
  const std::string_view head(name.data(), std::min(name.size(), kMaxMatchedName));
  std::size_t found = rules_.size();
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    if (compiled_->expressions[i].search(head)) {
      found = i;
      break;
    }
  }
  cache_.emplace(name, found);
  return found;
}

}  // namespace hopsim::profile
