#include "gpu_names.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace archfit::kb {

std::vector<std::string> gpu_name_words(std::string_view name) {
  std::vector<std::string> words;
  std::string word;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  // Vendor and brand words say nothing about the chip.
  size_t skip = 0;
  while (skip < words.size() && (words[skip] == "nvidia" || words[skip] == "geforce")) ++skip;
  words.erase(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(skip));
  return words;
}

std::string gpu_name_key(std::string_view name) {
  const auto words = gpu_name_words(name);
  return std::accumulate(words.begin(), words.end(), std::string());
}

size_t edit_distance(std::string_view a, std::string_view b) {
  // Optimal string alignment over three rolling rows.
  std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
  std::iota(previous.begin(), previous.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        current[j] = std::min(current[j], before[j - 2] + 1);
      }
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[b.size()];
}

}  // namespace archfit::kb
