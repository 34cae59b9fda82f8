#include "environment_commands.hpp"

#include <algorithm>
#include <cctype>

#include "env/python_locate.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::check {

namespace {

// A plain command's words, quotes removed: 'a b' and "a b" are one word.
// "&&" is a word of its own.
std::vector<std::string> words_of(const std::string& plain) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (const char c : plain) {
    if (quote) {
      if (c == quote) {
        quote = 0;
      } else {
        word += c;
      }
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

bool plain_word(const std::string& word, std::string_view also_safe) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || also_safe.find(c) != std::string::npos;
  });
}

// The word in quotes, as `shell` reads it back unchanged.
std::string always_quoted(const std::string& word, Shell shell) {
  switch (shell) {
    case Shell::posix: {
      // Double quotes read best ("<venv>/bin/python"); single where $, `, \,
      // " or ! would be read inside them.
      if (word.find_first_of("$`\\\"!") == std::string::npos) return "\"" + word + "\"";
      std::string out = "'";
      for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      return out + "'";
    }
    case Shell::cmd:
      // cmd.exe has no escape inside quotes; Windows paths and pip's words
      // never hold a double quote.
      return "\"" + word + "\"";
    case Shell::powershell: {
      std::string out = "'";
      for (const char c : word) out += c == '\'' ? std::string("''") : std::string(1, c);
      return out + "'";
    }
  }
  return word;
}

// The word, quoted only where `shell` would read it otherwise.
std::string quoted(const std::string& word, Shell shell) {
  switch (shell) {
    case Shell::posix:
      return plain_word(word, "_@%+=:,./-") ? word : always_quoted(word, shell);
    case Shell::cmd:
      return plain_word(word, "_@+=:,./-\\") ? word : always_quoted(word, shell);
    case Shell::powershell:
      return plain_word(word, "_+=:,./-\\") ? word : always_quoted(word, shell);
  }
  return word;
}

bool assignment(const std::string& word) {
  const auto equals = word.find('=');
  return equals != std::string::npos && equals > 0 &&
         (std::isalpha(static_cast<unsigned char>(word[0])) || word[0] == '_') &&
         plain_word(word.substr(0, equals), "_");
}

// One segment between "&&": a folder change, or assignments and a program.
std::string segment_for(const std::vector<std::string>& words, const CommandTarget& target,
                        Shell shell) {
  const auto path_word = [&](const std::string& path) {
    return target.windows ? windows_path(path) : path;
  };
  if (words.size() == 2 && words[0] == "cd") {
    const std::string folder = path_word(words[1]);
    switch (shell) {
      case Shell::posix:
        return "cd " + always_quoted(folder, shell);
      case Shell::cmd:
        return "cd /d " + always_quoted(folder, shell);
      case Shell::powershell:
        return "Set-Location -ErrorAction Stop -LiteralPath " + always_quoted(folder, shell);
    }
  }
  std::string out;
  size_t at = 0;
  for (; at < words.size() && assignment(words[at]); ++at) {
    const std::string& word = words[at];
    const auto equals = word.find('=');
    const std::string name = word.substr(0, equals), value = word.substr(equals + 1);
    switch (shell) {
      case Shell::posix:
        // Quoted always, as such lists are written (TORCH_CUDA_ARCH_LIST="8.9").
        out += name + "=" + always_quoted(value, shell) + " ";
        break;
      case Shell::cmd:
        out += "set \"" + name + "=" + value + "\" && ";
        break;
      case Shell::powershell:
        out += "$env:" + name + " = " + always_quoted(value, shell) + "; ";
        break;
    }
  }
  if (at < words.size() && words[at] == "pip" && !target.python.empty()) {
    const std::string python =
        target.windows ? windows_path(sys::utf8_of(target.python)) : sys::utf8_of(target.python);
    // The interpreter is always quoted: it is the word a user must not lose.
    out += (shell == Shell::powershell ? "& " : "") + always_quoted(python, shell) + " -m pip";
    ++at;
  } else if (shell == Shell::powershell && at < words.size()) {
    out += "& ";
  }
  for (; at < words.size(); ++at) {
    if (!out.empty() && out.back() != ' ') out += ' ';
    out += quoted(words[at], shell);
  }
  return out;
}

}  // namespace

std::string quoted_word(const std::string& word, Shell shell) { return quoted(word, shell); }

std::string windows_path(std::string_view utf8_path) {
  std::string text(utf8_path);
  if (text.size() >= 6 && text.starts_with("/mnt/") &&
      std::isalpha(static_cast<unsigned char>(text[5])) && (text.size() == 6 || text[6] == '/')) {
    text = std::string(1, static_cast<char>(std::toupper(static_cast<unsigned char>(text[5])))) +
           ":" + (text.size() == 6 ? "/" : text.substr(6));
  }
  std::replace(text.begin(), text.end(), '/', '\\');
  return text;
}

std::string command_for(const std::string& plain, const CommandTarget& target, Shell shell) {
  const std::vector<std::string> words = words_of(plain);
  std::vector<std::string> segments;
  std::vector<std::string> segment;
  for (size_t i = 0; i <= words.size(); ++i) {
    if (i == words.size() || words[i] == "&&") {
      if (!segment.empty()) segments.push_back(segment_for(segment, target, shell));
      segment.clear();
    } else {
      segment.push_back(words[i]);
    }
  }
  std::string out;
  for (const auto& text : segments) {
    if (!out.empty()) out += shell == Shell::powershell ? "; " : " && ";
    out += text;
  }
  return out;
}

CommandTarget command_target(const CheckReport& report,
                             const std::vector<std::filesystem::path>& site_packages) {
  CommandTarget target;
  if (report.environment && !report.environment->python.empty()) {
    target.python = report.environment->python;
  } else if (!site_packages.empty()) {
    target.python = env::python_of_site_packages(site_packages.front());
  }
  target.windows = std::any_of(site_packages.begin(), site_packages.end(),
                               [](const auto& site) { return env::windows_site_packages(site); }) ||
                   std::any_of(report.wheels.begin(), report.wheels.end(),
                               [](const env::Wheel& wheel) { return wheel.targets_windows(); });
  return target;
}

namespace {

void speak(Fix& fix, const CommandTarget& target) {
  fix.powershell_commands.clear();
  std::vector<std::string> commands;
  for (const auto& plain : fix.commands) {
    commands.push_back(command_for(plain, target, target.windows ? Shell::cmd : Shell::posix));
    if (target.windows)
      fix.powershell_commands.push_back(command_for(plain, target, Shell::powershell));
  }
  // cmd.exe expands %NAME% even inside double quotes and has no escape
  // there (a .bat file would want %% instead): a command holding % (a
  // folder named so) is not written for cmd at all. PowerShell's single
  // quotes keep it, so those commands stay.
  const bool cmd_expands =
      target.windows &&
      std::any_of(commands.begin(), commands.end(), [](const std::string& command) {
        return command.find('%') != std::string::npos;
      });
  if (cmd_expands) {
    commands.clear();
    fix.summary += (fix.summary.empty() ? "" : " ") + std::string(kCmdCannotQuotePercent);
  }
  fix.commands = std::move(commands);
  fix.shell = target.windows ? "cmd" : "sh";
  for (auto& alternative : fix.alternatives) speak(alternative, target);
}

}  // namespace

void speak_in_environment(CheckReport& report, const CommandTarget& target) {
  for (auto& stack : report.stacks) speak(stack.fix, target);
  for (auto& component : report.components) speak(component.fix, target);
}

}  // namespace archfit::check
