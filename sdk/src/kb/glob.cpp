#include "kb/packages.hpp"

namespace archfit::kb {

namespace {

// Whether `c` is in the bracket expression that starts at pattern[at] (just
// past '['); `end` is set past its ']'. False with end = npos when the
// bracket is never closed (then '[' is an ordinary character, as fnmatch
// has it).
bool in_bracket(std::string_view pattern, size_t at, char c, size_t& end) {
  bool negated = false;
  if (at < pattern.size() && (pattern[at] == '!' || pattern[at] == '^')) {
    negated = true;
    ++at;
  }
  bool matched = false;
  bool first = true;
  for (size_t i = at; i < pattern.size(); ++i) {
    if (pattern[i] == ']' && !first) {
      end = i + 1;
      return matched != negated;
    }
    first = false;
    // '\' makes the next character ordinary here too, at either end of a range.
    if (pattern[i] == '\\' && i + 1 < pattern.size()) ++i;
    const char low = pattern[i];
    if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
      i += 2;
      if (pattern[i] == '\\' && i + 1 < pattern.size()) ++i;
      if (low <= c && c <= pattern[i]) matched = true;
    } else if (low == c) {
      matched = true;
    }
  }
  end = std::string_view::npos;
  return false;
}

}  // namespace

// fnmatch(3) with no flags, written out because Windows has no fnmatch:
// '*' matches any run of characters ('/' too), '?' any one, "[a-z]",
// "[!0-9]" a class, '\' makes the next character ordinary. The knowledge
// base's patterns are a few dozen short names, so the classic
// backtrack-to-the-last-star walk is linear enough.
bool glob_matches(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0;
  size_t star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size()) {
      const char c = pattern[p];
      if (c == '*') {
        star = ++p;
        star_text = t;
        continue;
      }
      if (c == '?') {
        ++p;
        ++t;
        continue;
      }
      if (c == '[') {
        size_t end = 0;
        const bool matched = in_bracket(pattern, p + 1, text[t], end);
        if (end != std::string_view::npos) {
          if (matched) {
            p = end;
            ++t;
            continue;
          }
        } else if (text[t] == '[') {  // unclosed: a plain '['
          ++p;
          ++t;
          continue;
        }
      } else {
        const size_t literal = c == '\\' && p + 1 < pattern.size() ? p + 1 : p;
        if (pattern[literal] == text[t]) {
          p = literal + 1;
          ++t;
          continue;
        }
      }
    }
    if (star == std::string_view::npos) return false;
    p = star;  // let the last '*' take one more character
    t = ++star_text;
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace archfit::kb
