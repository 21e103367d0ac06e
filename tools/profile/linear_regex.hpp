// Regular expressions from users (profile-check's kernel rules), searched in time linear in the
// name: RE2 compiles a pattern to an automaton and never backtracks (std::regex takes minutes on
// `^(\w+:*)*Kernel$` against a 60-character name). The syntax is RE2's: ECMAScript's and Perl's
// without what needs backtracking (backreferences, lookarounds), which RE2 refuses.
#pragma once

#include <memory>
#include <string_view>

namespace re2 {
class RE2;
}

namespace hopsim::profile {

class LinearRegex {
 public:
  /// Compiles `pattern`; throws std::invalid_argument with RE2's reason and the part of the
  /// pattern it refused ("invalid escape sequence: \1").
  explicit LinearRegex(std::string_view pattern);

  /// Whether the pattern matches somewhere in `text` (std::regex_search's answer).
  bool search(std::string_view text) const;

 private:
  std::shared_ptr<const re2::RE2> compiled_;
};

}  // namespace hopsim::profile
