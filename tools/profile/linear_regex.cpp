// A linear-time regular expression search (linear_regex.hpp): a parser to a syntax tree, a
// compiler to a Thompson NFA, and a Pike VM that runs it.
#include "tools/profile/linear_regex.hpp"

#include <bitset>
#include <cctype>
#include <limits>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace hopsim::profile {

using ByteSet = std::bitset<256>;

enum class Op { Byte, Split, Jump, Begin, End, WordBoundary, NotWordBoundary, Match };

// Byte: consume a byte in `set`, go on at the next state; Split: go on at both x and y; Jump: at
// x; the assertions go on at the next state where they hold.
struct LinearRegex::State {
  Op op = Op::Match;
  ByteSet set;
  std::size_t x = 0;
  std::size_t y = 0;
};

namespace {

using State = LinearRegex::State;

// A parsed expression: a byte set, a sequence, alternatives, a repeat or an assertion.
struct Ast {
  enum class Kind { Set, Concat, Alt, Repeat, Assert };
  Kind kind = Kind::Concat;
  ByteSet set;
  Op assertion = Op::Begin;
  std::vector<Ast> parts;
  int min = 0;
  int max = -1;  // -1: unbounded
};

Ast node(Ast::Kind kind) {
  Ast a;
  a.kind = kind;
  return a;
}

Ast set_node(const ByteSet& set) {
  Ast a = node(Ast::Kind::Set);
  a.set = set;
  return a;
}

Ast assert_node(Op op) {
  Ast a = node(Ast::Kind::Assert);
  a.assertion = op;
  return a;
}

State state(Op op, std::size_t x = 0) {
  State s;
  s.op = op;
  s.x = x;
  return s;
}

ByteSet byte_set(int (*test)(int)) {
  ByteSet s;
  for (int c = 0; c < 256; ++c) {
    s[static_cast<std::size_t>(c)] = test(c) != 0;
  }
  return s;
}

int is_word(int c) {
  return std::isalnum(c) != 0 || c == '_' ? 1 : 0;
}

int is_space(int c) {
  return std::isspace(c) != 0 ? 1 : 0;
}

int is_digit(int c) {
  return std::isdigit(c) != 0 ? 1 : 0;
}

ByteSet single(unsigned char c) {
  ByteSet s;
  s.set(c);
  return s;
}

class Parser {
 public:
  explicit Parser(std::string_view p) : p_(p) {}

  Ast parse() {
    Ast a = alternation();
    if (pos_ < p_.size()) {
      fail("a ')' that closes no group");
    }
    return a;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument(fmt::format("{} at character {}", what, pos_ + 1));
  }

  bool at_end() const { return pos_ >= p_.size(); }

  char peek() const { return p_[pos_]; }

  Ast alternation() {
    Ast alt = node(Ast::Kind::Alt);
    alt.parts.push_back(sequence());
    while (!at_end() && peek() == '|') {
      ++pos_;
      alt.parts.push_back(sequence());
    }
    return alt.parts.size() == 1 ? std::move(alt.parts.front()) : alt;
  }

  Ast sequence() {
    Ast seq = node(Ast::Kind::Concat);
    while (!at_end() && peek() != '|' && peek() != ')') {
      seq.parts.push_back(quantified());
    }
    return seq;
  }

  // An atom and the quantifier after it, if any.
  Ast quantified() {
    Ast atom = this->atom();
    if (at_end() || std::string_view("*+?{").find(peek()) == std::string_view::npos) {
      return atom;
    }
    if (atom.kind == Ast::Kind::Assert) {
      fail("a quantifier after an assertion (^, $, \\b)");
    }
    Ast rep = node(Ast::Kind::Repeat);
    const char q = p_[pos_++];
    if (q == '{') {
      count(rep);
    } else {
      rep.min = q == '+' ? 1 : 0;
      rep.max = q == '?' ? 1 : -1;
    }
    if (!at_end() && peek() == '?') {
      ++pos_;  // lazy: the same answer for a search
    }
    if (!at_end() && std::string_view("*+?{").find(peek()) != std::string_view::npos) {
      fail("a quantifier with nothing to repeat");
    }
    rep.parts.push_back(std::move(atom));
    return rep;
  }

  int number() {
    if (at_end() || std::isdigit(static_cast<unsigned char>(peek())) == 0) {
      fail("a '{' that starts no {n}, {n,} or {n,m} count (escape it: \\{)");
    }
    int n = 0;
    while (!at_end() && std::isdigit(static_cast<unsigned char>(peek())) != 0) {
      n = n * 10 + (p_[pos_++] - '0');
      if (n > kMaxRepeat) {
        fail(fmt::format("a count above {}", kMaxRepeat));
      }
    }
    return n;
  }

  // "{n}", "{n,}" or "{n,m}", after the '{'.
  void count(Ast& rep) {
    rep.min = number();
    rep.max = rep.min;
    if (!at_end() && peek() == ',') {
      ++pos_;
      rep.max = !at_end() && peek() == '}' ? -1 : number();
    }
    if (at_end() || p_[pos_++] != '}') {
      fail("a count without its '}'");
    }
    if (rep.max != -1 && rep.max < rep.min) {
      fail("a count {n,m} with m below n");
    }
  }

  Ast atom() {
    const char c = p_[pos_++];
    switch (c) {
      case '(':
        return group();
      case '[':
        return set_node(byte_class());
      case '.':
        return set_node(~(single('\n') | single('\r')));
      case '^':
        return assert_node(Op::Begin);
      case '$':
        return assert_node(Op::End);
      case '\\':
        return escape();
      case '*':
      case '+':
      case '?':
      case '{':
        --pos_;
        fail("a quantifier with nothing to repeat");
      default:
        return set_node(single(static_cast<unsigned char>(c)));
    }
  }

  Ast group() {
    if (!at_end() && peek() == '?') {
      if (pos_ + 1 < p_.size() && p_[pos_ + 1] == ':') {
        pos_ += 2;
      } else {
        fail("a lookaround or named group (?...): not supported");
      }
    }
    Ast inner = alternation();
    if (at_end()) {
      fail("a '(' that is not closed");
    }
    ++pos_;
    return inner;
  }

  // The escape after a backslash: a class (\d ...), an assertion (\b \B) or one byte.
  Ast escape() {
    if (at_end()) {
      fail("a '\\' at the end");
    }
    if (peek() == 'b' || peek() == 'B') {
      return assert_node(p_[pos_++] == 'b' ? Op::WordBoundary : Op::NotWordBoundary);
    }
    return set_node(escaped_set());
  }

  // \d \w \s and their complements, \t \n \r \f \v \0, or escaped punctuation.
  ByteSet escaped_set() {
    const char c = p_[pos_];
    const auto cls = [&](int (*test)(int), bool negate) {
      ++pos_;
      return negate ? ~byte_set(test) : byte_set(test);
    };
    switch (c) {
      case 'd':
        return cls(is_digit, false);
      case 'D':
        return cls(is_digit, true);
      case 'w':
        return cls(is_word, false);
      case 'W':
        return cls(is_word, true);
      case 's':
        return cls(is_space, false);
      case 'S':
        return cls(is_space, true);
      default:
        break;
    }
    constexpr std::string_view kNamed = "tnrfv0";
    constexpr std::string_view kBytes = "\t\n\r\f\v";
    if (const std::size_t i = kNamed.find(c); i != std::string_view::npos) {
      ++pos_;
      return single(i < kBytes.size() ? static_cast<unsigned char>(kBytes[i]) : 0);
    }
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      fail(std::isdigit(static_cast<unsigned char>(c)) != 0
               ? fmt::format("a backreference (\\{}): not supported", c)
               : fmt::format("the escape \\{}: not supported", c));
    }
    ++pos_;
    return single(static_cast<unsigned char>(c));
  }

  // "[...]" after the '[': bytes, ranges a-z, escapes; "[^...]" their complement.
  ByteSet byte_class() {
    const bool negate = !at_end() && peek() == '^';
    pos_ += negate ? 1 : 0;
    ByteSet s;
    while (!at_end() && peek() != ']') {
      const bool escaped = peek() == '\\';
      const std::size_t start = pos_;
      ++pos_;
      const ByteSet item = escaped ? class_escape() : single(static_cast<unsigned char>(p_[start]));
      const bool range =
          item.count() == 1 && pos_ + 1 < p_.size() && peek() == '-' && p_[pos_ + 1] != ']';
      if (!range) {
        s |= item;
        continue;
      }
      ++pos_;
      const ByteSet end = peek() == '\\' ? (++pos_, class_escape())
                                         : single(static_cast<unsigned char>(p_[pos_++]));
      s |= span(item, end);
    }
    if (at_end()) {
      fail("a '[' that is not closed");
    }
    ++pos_;
    return negate ? ~s : s;
  }

  ByteSet class_escape() {
    if (at_end()) {
      fail("a '\\' at the end");
    }
    if (peek() == 'b') {
      ++pos_;
      return single('\b');
    }
    return escaped_set();
  }

  // The bytes from `from` to `to`, each a single byte.
  ByteSet span(const ByteSet& from, const ByteSet& to) const {
    std::size_t lo = 0;
    std::size_t hi = 0;
    while (!from[lo]) {
      ++lo;
    }
    while (to.count() == 1 && !to[hi]) {
      ++hi;
    }
    if (to.count() != 1 || hi < lo) {
      fail("a range [a-z] whose end is before its start, or a class");
    }
    ByteSet s;
    for (std::size_t c = lo; c <= hi; ++c) {
      s.set(c);
    }
    return s;
  }

  std::string_view p_;
  std::size_t pos_ = 0;
};

class Compiler {
 public:
  std::vector<State> program;

  std::size_t push(State s) {
    if (program.size() >= kMaxStates) {
      throw std::invalid_argument(
          fmt::format("a pattern of more than {} states (its counted repeats)", kMaxStates));
    }
    program.push_back(s);
    return program.size() - 1;
  }

  void emit(const Ast& a) {
    switch (a.kind) {
      case Ast::Kind::Set:
        program[push(state(Op::Byte))].set = a.set;
        return;
      case Ast::Kind::Assert:
        push(state(a.assertion));
        return;
      case Ast::Kind::Concat:
        for (const Ast& part : a.parts) {
          emit(part);
        }
        return;
      case Ast::Kind::Alt:
        alternatives(a);
        return;
      case Ast::Kind::Repeat:
        repeat(a);
        return;
    }
  }

 private:
  void alternatives(const Ast& a) {
    std::vector<std::size_t> jumps;
    for (std::size_t i = 0; i + 1 < a.parts.size(); ++i) {
      const std::size_t split = push(state(Op::Split));
      program[split].x = split + 1;
      emit(a.parts[i]);
      jumps.push_back(push(state(Op::Jump)));
      program[split].y = program.size();
    }
    emit(a.parts.back());
    for (const std::size_t j : jumps) {
      program[j].x = program.size();
    }
  }

  void repeat(const Ast& a) {
    for (int i = 0; i < a.min; ++i) {
      emit(a.parts.front());
    }
    if (a.max == -1) {
      const std::size_t split = push(state(Op::Split));
      program[split].x = split + 1;
      emit(a.parts.front());
      push(state(Op::Jump, split));
      program[split].y = program.size();
      return;
    }
    std::vector<std::size_t> splits;
    for (int i = a.min; i < a.max; ++i) {
      splits.push_back(push(state(Op::Split)));
      program[splits.back()].x = splits.back() + 1;
      emit(a.parts.front());
    }
    for (const std::size_t s : splits) {
      program[s].y = program.size();
    }
  }
};

bool word_at(std::string_view text, std::size_t i) {
  return i < text.size() && is_word(static_cast<unsigned char>(text[i])) != 0;
}

// Adds the thread at `pc` (and where its jumps, splits and holding assertions lead) to `list`
// at position `pos` of `text`; true when one reaches the match.
bool add(const std::vector<State>& prog, std::size_t pc, std::size_t pos, std::string_view text,
         std::vector<std::size_t>& list, std::vector<std::size_t>& mark) {
  std::vector<std::size_t> stack{pc};
  while (!stack.empty()) {
    const std::size_t at = stack.back();
    stack.pop_back();
    if (mark[at] == pos) {
      continue;
    }
    mark[at] = pos;
    const State& s = prog[at];
    const bool boundary = pos > 0 && word_at(text, pos - 1);
    switch (s.op) {
      case Op::Byte:
        list.push_back(at);
        break;
      case Op::Match:
        return true;
      case Op::Jump:
        stack.push_back(s.x);
        break;
      case Op::Split:
        stack.push_back(s.y);
        stack.push_back(s.x);
        break;
      case Op::Begin:
        if (pos == 0)
          stack.push_back(at + 1);
        break;
      case Op::End:
        if (pos == text.size())
          stack.push_back(at + 1);
        break;
      case Op::WordBoundary:
        if (boundary != word_at(text, pos))
          stack.push_back(at + 1);
        break;
      case Op::NotWordBoundary:
        if (boundary == word_at(text, pos))
          stack.push_back(at + 1);
        break;
    }
  }
  return false;
}

}  // namespace

LinearRegex::LinearRegex(std::string_view pattern) {
  Compiler c;
  c.emit(Parser(pattern).parse());
  c.push(state(Op::Match));
  program_ = std::make_shared<const std::vector<State>>(std::move(c.program));
}

bool LinearRegex::search(std::string_view text) const {
  const std::vector<State>& prog = *program_;
  std::vector<std::size_t> mark(prog.size(), std::numeric_limits<std::size_t>::max());
  std::vector<std::size_t> current;
  std::vector<std::size_t> next;
  for (std::size_t i = 0;; ++i) {
    if (add(prog, 0, i, text, current, mark)) {  // a match may start at every position
      return true;
    }
    if (i == text.size()) {
      return false;
    }
    next.clear();
    const auto byte = static_cast<unsigned char>(text[i]);
    for (const std::size_t pc : current) {
      if (prog[pc].set[byte] && add(prog, pc + 1, i + 1, text, next, mark)) {
        return true;
      }
    }
    std::swap(current, next);
  }
}

}  // namespace hopsim::profile
