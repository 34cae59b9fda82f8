#pragma once
// Regular expressions over text archfit did not write (error messages,
// version files, METADATA, NVRTC logs, the knowledge base's patterns),
// matched in time linear in the text and with no recursion: RE2. std::regex
// recursed once per character and overflowed the stack on a 40 KB line,
// killing the host process (issue 34). RE2's syntax is std::regex's
// ECMAScript without backreferences and lookaround, which no pattern here
// uses; a pattern RE2 refuses is an error for whoever wrote it.
#include <re2/re2.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace archfit::util {

class Pattern {
 public:
  enum class Case { sensitive, insensitive };

  Pattern() = default;
  explicit Pattern(std::string_view pattern, Case letter_case = Case::sensitive) {
    re2::RE2::Options options;
    options.set_log_errors(false);
    options.set_case_sensitive(letter_case == Case::sensitive);
    // Memory for the DFA; past it RE2 falls back to its NFA, still linear.
    options.set_max_mem(16 << 20);
    regex_ =
        std::make_shared<const re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  }

  // Whether the pattern compiled; `error()` says why not.
  bool ok() const { return regex_ && regex_->ok(); }
  std::string error() const { return regex_ ? regex_->error() : "no pattern"; }
  int groups() const { return ok() ? regex_->NumberOfCapturingGroups() : 0; }

  // The first match anywhere in `text`: group 0 is the whole match, then each
  // group ("" for one that took no part). nullopt when nothing matches.
  std::optional<std::vector<std::string>> search(std::string_view text) const {
    auto found = find(text, 0, re2::RE2::UNANCHORED);
    if (!found) return std::nullopt;
    return std::move(found->groups);
  }
  // The same, where the pattern must match the whole of `text`.
  std::optional<std::vector<std::string>> match_whole(std::string_view text) const {
    auto found = find(text, 0, re2::RE2::ANCHOR_BOTH);
    if (!found) return std::nullopt;
    return std::move(found->groups);
  }
  bool found_in(std::string_view text) const {
    return ok() && regex_->Match(piece(text), 0, text.size(), re2::RE2::UNANCHORED, nullptr, 0);
  }
  bool matches_whole(std::string_view text) const {
    return ok() && regex_->Match(piece(text), 0, text.size(), re2::RE2::ANCHOR_BOTH, nullptr, 0);
  }
  // Group `group` of every match, left to right, matches not overlapping.
  std::vector<std::string> find_all(std::string_view text, int group = 0) const {
    std::vector<std::string> found;
    size_t at = 0;
    while (at <= text.size()) {
      auto next = find(text, at, re2::RE2::UNANCHORED);
      if (!next) break;
      found.push_back(std::move(next->groups.at(static_cast<size_t>(group))));
      // An empty match moves on by one character, as std::sregex_iterator does.
      at = next->end > at ? next->end : at + 1;
    }
    return found;
  }

 private:
  struct Found {
    std::vector<std::string> groups;
    size_t end = 0;  // where the whole match ends in the text
  };

  static re2::StringPiece piece(std::string_view text) {
    return re2::StringPiece(text.data(), text.size());
  }

  std::optional<Found> find(std::string_view text, size_t start, re2::RE2::Anchor anchor) const {
    if (!ok()) return std::nullopt;
    std::vector<re2::StringPiece> pieces(static_cast<size_t>(regex_->NumberOfCapturingGroups()) +
                                         1);
    if (!regex_->Match(piece(text), start, text.size(), anchor, pieces.data(),
                       static_cast<int>(pieces.size())))
      return std::nullopt;
    Found found;
    for (const auto& group : pieces)
      found.groups.emplace_back(group.data() ? std::string(group.data(), group.size()) : "");
    found.end = static_cast<size_t>(pieces[0].data() - text.data()) + pieces[0].size();
    return found;
  }

  std::shared_ptr<const re2::RE2> regex_;
};

}  // namespace archfit::util
