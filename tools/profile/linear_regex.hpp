// Regular expressions from users (profile-check's kernel rules), searched in time linear in the
// name: a Thompson NFA run as a Pike VM, every state advanced once per character, so no pattern
// backtracks (std::regex takes minutes on `^(\w+:*)*Kernel$` against a 60-character name).
//
// The syntax is ECMAScript's without what needs backtracking or context: literals and escaped
// punctuation, `.`, classes `[a-z_]` and `[^...]`, `\d \w \s \D \W \S`, `\t \n \r \f \v`,
// anchors `^ $` (the whole name; no multiline), `\b \B`, groups `(...)` and `(?:...)`,
// alternation `|`, quantifiers `* + ? {n} {n,} {n,m}` (a lazy `?` after one is accepted: a
// search's answer is the same). Backreferences, lookarounds and other escapes are refused.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hopsim::profile {

/// The largest count a `{n,m}` may give.
inline constexpr int kMaxRepeat = 1000;
/// The most NFA states a pattern may compile to (a counted repeat copies its body).
inline constexpr std::size_t kMaxStates = 20000;

class LinearRegex {
 public:
  /// Compiles `pattern`; throws std::invalid_argument saying what is wrong and where
  /// ("a backreference (\1) at character 7: not supported").
  explicit LinearRegex(std::string_view pattern);

  /// Whether the pattern matches somewhere in `text` (std::regex_search's answer).
  bool search(std::string_view text) const;

  /// One state of the NFA (linear_regex.cpp).
  struct State;

 private:
  std::shared_ptr<const std::vector<State>> program_;
};

}  // namespace hopsim::profile
