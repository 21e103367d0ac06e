// Kernel classification rules: which of the compute model's kernel classes (or communication,
// or work the model does not price) a GPU kernel belongs to, by its name. The rules are data
// (configs/profile/kernel-classes.json, or a user's file): an ordered list of regular
// expressions, the first that matches a kernel's name wins (docs/profile-check.md).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hopsim::profile {

/// A class a rule may name besides the compute model's kernel classes.
inline constexpr std::string_view kNccl = "nccl";          ///< NCCL's collectives and P2P
inline constexpr std::string_view kDeepEp = "deepep";      ///< DeepEP's dispatch and combine
inline constexpr std::string_view kUnmodelled = "unmodelled";  ///< work hopsim does not price
/// Rules see this many characters of a name at most (kernel_rules.cpp says why).
inline constexpr std::size_t kMaxMatchedName = 2048;
/// Kernels no rule matches.
inline constexpr std::string_view kUnclassified = "unclassified";

/// Whether a rule may name `name`: a kernel class (kernel_class_name), nccl, deepep or
/// unmodelled.
bool known_class(std::string_view name);
/// nccl and deepep.
bool communication_class(std::string_view name);

struct KernelRule {
  /// The classes the kernel may be: one, or several a name cannot tell apart (an FP8 GEMM's
  /// fprop, dgrad and wgrad run one kernel); a check merges those classes into one row.
  std::vector<std::string> classes;
  std::string pattern;  ///< a regular expression (linear_regex.hpp), searched in the name
};

class KernelRules {
 public:
  /// Reads a rules file; an unknown class, a bad expression or an unknown key is one
  /// config::ConfigError naming the file and the JSON path ("/rules/3/match").
  static KernelRules read(const std::string& path);
  /// The rules file shipped with hopsim (configs/profile/kernel-classes.json, found like the
  /// presets).
  static std::string default_path();

  /// The index of the first rule found in `name` (its first kMaxMatchedName characters), or
  /// size() when none is.
  std::size_t match(const std::string& name) const;
  const KernelRule& rule(std::size_t i) const { return rules_[i]; }
  std::size_t size() const { return rules_.size(); }
  const std::string& file() const { return file_; }

 private:
  struct Compiled;  // the expressions, compiled (linear_regex.hpp)
  std::string file_;
  std::vector<KernelRule> rules_;
  std::shared_ptr<const Compiled> compiled_;
  mutable std::map<std::string, std::size_t, std::less<>> cache_;  ///< by kernel name
};

}  // namespace hopsim::profile
