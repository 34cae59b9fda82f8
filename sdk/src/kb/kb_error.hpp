#pragma once
// The errors of the kb module. Loading throws KbFormatError for a file that
// is not a valid knowledge base (it names the file, line and field) and
// KbError for one that cannot be read; resolve_gpu throws UnknownGpuError.
#include <stdexcept>
#include <string>
#include <vector>

namespace archfit::kb {

class KbError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class KbFormatError : public KbError {
 public:
  // line and column are 1-based; 0 when unknown.
  KbFormatError(std::string file, int line, int column, std::string field, std::string problem)
      : KbError(file + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                (field.empty() ? "" : field + ": ") + problem),
        file_(std::move(file)),
        line_(line),
        column_(column),
        field_(std::move(field)),
        problem_(std::move(problem)) {}

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& field() const { return field_; }  // "gpus[3].cc"; empty for syntax errors
  const std::string& problem() const { return problem_; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string field_;
  std::string problem_;
};

class UnknownGpuError : public KbError {
 public:
  UnknownGpuError(std::string query, std::vector<std::string> suggestions)
      : KbError(message(query, suggestions)),
        query_(std::move(query)),
        suggestions_(std::move(suggestions)) {}

  const std::string& query() const { return query_; }
  const std::vector<std::string>& suggestions() const { return suggestions_; }  // closest first

 private:
  static std::string message(const std::string& query, const std::vector<std::string>& names) {
    std::string text = "unknown GPU \"" + query + "\"";
    if (names.empty()) return text;
    text += "; closest known names:";
    for (size_t i = 0; i < names.size(); ++i) text += (i ? ", " : " ") + names[i];
    return text + " (a compute capability such as 12.0 or sm_120 also works)";
  }

  std::string query_;
  std::vector<std::string> suggestions_;
};

}  // namespace archfit::kb
