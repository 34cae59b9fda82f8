#include "probe_helper.hpp"

#include <unistd.h>

#include <array>
#include <charconv>
#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>

#include "plugin_load.hpp"
#include "plugin_wire.hpp"
#include "sys/console.hpp"
#include "sys/file_io.hpp"
#include "sys/machine.hpp"
#include "sys/module_location.hpp"
#include "sys/read_file.hpp"
#include "sys/run_program.hpp"
#include "sys/trust.hpp"
#include "sys/user_folders.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::plugin {

namespace fs = std::filesystem;
using nlohmann::json;
using Ending = sys::ChildOutcome::Ending;

namespace {

// The answer line's version: a host and a helper from different builds that
// disagree on it are refused, not misread.
constexpr int kProbeAnswerVersion = 1;

// The argument that makes the helper load one plugin in its own process
// (where there is no fork), and what that process may commit.
constexpr const char* kOneArgument = "--one";
constexpr size_t kPluginMemoryLimit = size_t{4} << 30;

constexpr std::array<std::pair<Ending, const char*>, 6> kEndingNames{{
    {Ending::exited, "exited"},
    {Ending::signalled, "signalled"},
    {Ending::timed_out, "timed_out"},
    {Ending::sent_too_much, "sent_too_much"},
    {Ending::flooded, "flooded"},
    {Ending::vanished, "vanished"},
}};

const char* ending_name(Ending ending) {
  for (const auto& [value, name] : kEndingNames)
    if (value == ending) return name;
  return "vanished";
}

bool ending_from_name(const std::string& text, Ending& ending) {
  for (const auto& [value, name] : kEndingNames) {
    if (text == name) {
      ending = value;
      return true;
    }
  }
  return false;
}

bool write_all(int fd, const char* bytes, size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(fd, bytes, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    bytes += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}

template <typename Number>
bool parse_number(const char* text, Number& value) {
  const std::string_view view(text);
  const auto [end, error] = std::from_chars(view.data(), view.data() + view.size(), value);
  return error == std::errc() && end == view.data() + view.size();
}

// What the plugin printed, as much as is shown, on this helper's stderr
// (the host's): a plugin author still sees their own messages.
void pass_on_messages(const sys::ChildOutcome& outcome, const fs::path& manifest) {
  if (outcome.message_bytes == 0) return;
  std::string text = outcome.messages;
  if (!text.empty() && text.back() != '\n') text += '\n';
  if (outcome.message_bytes > outcome.messages.size())
    text += "archfit: " + std::to_string(outcome.message_bytes - outcome.messages.size()) +
            " more bytes the plugin of " + sys::utf8_of(manifest) + " printed are not shown\n";
  write_all(STDERR_FILENO, text.data(), text.size());
}

// The answer for one plugin, loaded in this process: what it offers, or
// why it is refused.
std::vector<uint8_t> load_and_encode(const fs::path& manifest, uint32_t abi_min, uint32_t abi_max) {
  try {
    return encode_loaded(load_in_this_process(read_manifest(manifest), abi_min, abi_max));
  } catch (const PluginError& refused) {
    return encode_refusal(refused.what());
  } catch (const std::exception& error) {  // an allocation, the file system
    return encode_refusal(std::string("it could not be loaded: ") + error.what());
  }
}

// Where there is no fork (Windows): the plugin is loaded in a process of
// this helper's own, `archfit-plugin-probe --one …`, in a job object that
// ends it at the time limit, on printing past the limit, and caps the
// memory it commits; processes it leaves running are killed and counted
// when it ends, as the subreaper does on POSIX. Its answer comes back in
// `answer_file`; what it printed, on its stdout and stderr, as its messages.
sys::ChildOutcome probe_in_own_process(const fs::path& self, const fs::path& manifest,
                                       uint32_t abi_min, uint32_t abi_max,
                                       const sys::ChildLimits& limits,
                                       const fs::path& answer_file) {
  std::error_code ignored;
  fs::remove(answer_file, ignored);
  sys::ProgramOptions options;
  options.timeout = limits.time_limit;
  options.standard_error = sys::StandardError::merged;
  options.max_output = limits.max_message_bytes;
  options.stop_past_max_output = true;
  options.end_what_it_leaves = true;
  options.max_memory = kPluginMemoryLimit;
  const sys::ProgramResult ran =
      sys::run_program(self,
                       {kOneArgument, std::to_string(abi_min), std::to_string(abi_max),
                        sys::utf8_of(answer_file), sys::utf8_of(manifest)},
                       options);
  sys::ChildOutcome outcome;
  outcome.message_bytes = ran.output.size();
  outcome.messages = ran.output.substr(0, limits.kept_message_bytes);
  outcome.left_running = ran.left_running;
  if (ran.timed_out) {
    outcome.ending = Ending::timed_out;
  } else if (ran.output_overflowed) {
    outcome.ending = Ending::flooded;
  } else if (ran.status_unknown) {
    outcome.ending = Ending::vanished;
  } else if (!ran.exited) {
    outcome.ending = Ending::signalled;
    outcome.signal = ran.signal;
  } else {
    outcome.exit_status = ran.exit_status;
    if (ran.exit_status == 0) {
      std::string problem;
      if (auto answer = sys::read_file(answer_file, &problem, limits.max_bytes)) {
        outcome.output.assign(answer->begin(), answer->end());
      } else if (fs::exists(answer_file, ignored)) {
        outcome.ending = Ending::sent_too_much;
      }
    }
  }
  fs::remove(answer_file, ignored);
  return outcome;
}

// `archfit-plugin-probe --one <abi min> <abi max> <answer file> <manifest>`:
// loads the plugin here, writes the answer and ends without running the
// plugin's static destructors (as a forked child does with _exit).
[[noreturn]] void probe_one(const std::vector<std::string>& words) {
  uint32_t abi_min = 0;
  uint32_t abi_max = 0;
  if (words.size() != 6 || !parse_number(words[2].c_str(), abi_min) ||
      !parse_number(words[3].c_str(), abi_max))
    std::_Exit(2);
  sys::end_quietly_on_crash();
  const std::vector<uint8_t> answer =
      load_and_encode(sys::path_of_utf8(words[5]), abi_min, abi_max);
  const std::string text(answer.begin(), answer.end());
  const bool written = sys::replace_whole_file(sys::path_of_utf8(words[4]), text).empty();
  std::fflush(nullptr);
  std::_Exit(written ? 0 : sys::kWorkThrew);
}

}  // namespace

sys::ChildLimits plugin_child_limits(std::chrono::milliseconds time_limit) {
  sys::ChildLimits limits;
  limits.time_limit = time_limit;
  limits.max_bytes = kPluginAnswerLimit;
  limits.capture_messages = true;
  limits.kept_message_bytes = kPluginMessagesShown;
  limits.max_message_bytes = kPluginMessageLimit;
  limits.end_descendants = true;
  return limits;
}

fs::path find_probe_helper() {
  std::vector<fs::path> candidates;
  const std::string file_name = std::string(kProbeHelperName) + sys::kProgramSuffix;
  if (const fs::path module = sys::running_module_dir(); !module.empty()) {
    candidates.push_back(module / file_name);
    candidates.push_back(module.parent_path() / "libexec" / "archfit" / file_name);
  }
#ifdef ARCHFIT_PLUGIN_PROBE_BUILD_PATH
  // The tests link archfit into executables of their own folders.
  candidates.emplace_back(ARCHFIT_PLUGIN_PROBE_BUILD_PATH);
#endif
  std::string looked;
  for (const fs::path& candidate : candidates) {
    std::error_code error;
    if (!fs::is_regular_file(candidate, error)) {
      looked += (looked.empty() ? "" : ", ") + sys::utf8_of(candidate);
      continue;
    }
    // Plugins are loaded in it: a helper someone else could replace would
    // run their code with this user's rights.
    if (auto untrusted = sys::untrusted_path_chain(candidate, "programs"); !untrusted.empty())
      throw PluginError("archfit's plugin probe helper cannot be used: " + untrusted);
    return candidate;
  }
  throw PluginError(std::string("archfit's plugin probe helper ") + kProbeHelperName +
                    " is missing (looked for " + looked +
                    "); plugins are loaded only in it, so reinstall archfit");
}

std::vector<ProbeAnswer> probe_in_helper(const fs::path& helper,
                                         const std::vector<fs::path>& manifests, uint32_t abi_min,
                                         uint32_t abi_max, std::chrono::milliseconds time_limit) {
  std::vector<std::string> arguments{std::to_string(abi_min), std::to_string(abi_max),
                                     std::to_string(time_limit.count())};
  for (const fs::path& manifest : manifests) arguments.push_back(sys::utf8_of(manifest));
  sys::ProgramOptions options;
  // Each plugin may take its limit; the helper's own start and its killing
  // of what plugins left running come on top.
  options.timeout = time_limit * static_cast<long long>(manifests.size()) + kProbeHelperGrace;
  options.max_output = manifests.size() * (kPluginAnswerLimit + (size_t{1} << 10));
  sys::ProgramResult result;
  try {
    result = sys::run_program(helper, arguments, options);
  } catch (const std::system_error& error) {
    throw PluginError("archfit's plugin probe helper " + helper.string() +
                      " cannot be started: " + error.what());
  }
  const std::string helper_failed = "archfit's plugin probe helper " + helper.string() + " ";
  if (result.timed_out) throw PluginError(helper_failed + result.how_it_ended(options));
  if (!result.status_unknown && !result.succeeded())
    throw PluginError(helper_failed + "failed (" + result.how_it_ended(options) + ")");
  const auto unreadable = [&] {
    return PluginError(helper_failed + "answered in a form this archfit does not read (" +
                       std::to_string(result.output.size()) +
                       " bytes); it may be from another archfit build, so reinstall archfit");
  };
  std::vector<ProbeAnswer> answers;
  size_t at = 0;
  for (size_t index = 0; index < manifests.size(); ++index) {
    const size_t line_end = result.output.find('\n', at);
    if (line_end == std::string::npos) throw unreadable();
    const json line =
        json::parse(result.output.begin() + static_cast<std::ptrdiff_t>(at),
                    result.output.begin() + static_cast<std::ptrdiff_t>(line_end), nullptr, false);
    ProbeAnswer answer;
    sys::ChildOutcome& outcome = answer.outcome;
    if (!line.is_object() || line.value("archfit_plugin_probe", 0) != kProbeAnswerVersion ||
        !ending_from_name(line.value("ending", std::string()), outcome.ending))
      throw unreadable();
    const size_t bytes = line.value("answer_bytes", size_t{0});
    at = line_end + 1;
    if (bytes > result.output.size() - at) throw unreadable();
    outcome.exit_status = line.value("exit_status", 0);
    outcome.signal = line.value("signal", 0);
    outcome.left_running = line.value("left_running", size_t{0});
    outcome.message_bytes = line.value("message_bytes", uint64_t{0});
    outcome.output.assign(result.output.begin() + static_cast<std::ptrdiff_t>(at),
                          result.output.begin() + static_cast<std::ptrdiff_t>(at + bytes));
    answer.milliseconds = line.value("milliseconds", 0.0);
    at += bytes;
    answers.push_back(std::move(answer));
  }
  return answers;
}

int probe_helper_main(int argc, char** argv) {
  // Whatever the starter left open is not the plugins' to keep.
  sys::close_inherited_files();
  // The answer is framed bytes: no "\r\n" for "\n" on Windows.
  sys::binary_stdout();
  // Manifest paths in UTF-8 (Windows' argv is in the ANSI code page).
  const std::vector<std::string> words = sys::command_line_utf8(argc, argv);
  if (words.size() > 1 && words[1] == kOneArgument) probe_one(words);
  const auto refuse_arguments = [] {
    const char usage[] =
        "archfit-plugin-probe: archfit's own helper, not run by hand; it takes\n"
        "  <abi min> <abi max> <time limit in ms> <manifest>...\n";
    write_all(STDERR_FILENO, usage, sizeof usage - 1);
    return 2;
  };
  uint32_t abi_min = 0;
  uint32_t abi_max = 0;
  long long milliseconds = 0;
  if (words.size() < 5 || !parse_number(words[1].c_str(), abi_min) ||
      !parse_number(words[2].c_str(), abi_max) || !parse_number(words[3].c_str(), milliseconds) ||
      milliseconds <= 0)
    return refuse_arguments();
  // Every process a plugin leaves behind, even one that setsid()s and forks
  // again, comes to this process when its parent ends, to be killed.
  sys::become_child_subreaper();
  const sys::ChildLimits limits = plugin_child_limits(std::chrono::milliseconds(milliseconds));
  // Without fork, answers come back in files of a private folder.
  fs::path answers;
  struct RemoveAnswers {
    const fs::path& dir;
    ~RemoveAnswers() {
      std::error_code ignored;
      if (!dir.empty()) fs::remove_all(dir, ignored);
    }
  } remove_answers{answers};
  if (!sys::kCanFork) {
    answers = fs::temp_directory_path() /
              ("archfit-plugin-probe-" + std::to_string(sys::this_process_id()));
    if (const std::string problem = sys::create_private_directory(answers); !problem.empty()) {
      const std::string text = "archfit-plugin-probe: " + problem + "\n";
      write_all(STDERR_FILENO, text.data(), text.size());
      return 1;
    }
  }
  for (size_t index = 4; index < words.size(); ++index) {
    const fs::path manifest_path = sys::path_of_utf8(words[index]);
    const auto started = std::chrono::steady_clock::now();
    sys::ChildOutcome outcome;
    try {
      if (sys::kCanFork) {
        outcome = sys::run_in_child(
            [&] { return load_and_encode(manifest_path, abi_min, abi_max); }, limits);
      } else {
        outcome = probe_in_own_process(sys::running_module_file(), manifest_path, abi_min, abi_max,
                                       limits, answers / std::to_string(index));
      }
    } catch (const std::exception& error) {  // no pipe, no fork: this helper's own failure
      const std::string text = std::string("archfit-plugin-probe: ") + error.what() + "\n";
      write_all(STDERR_FILENO, text.data(), text.size());
      return 1;
    }
    pass_on_messages(outcome, manifest_path);
    const json line = {{"archfit_plugin_probe", kProbeAnswerVersion},
                       {"ending", ending_name(outcome.ending)},
                       {"exit_status", outcome.exit_status},
                       {"signal", outcome.signal},
                       {"left_running", outcome.left_running},
                       {"message_bytes", outcome.message_bytes},
                       {"milliseconds", std::chrono::duration<double, std::milli>(
                                            std::chrono::steady_clock::now() - started)
                                            .count()},
                       {"answer_bytes", outcome.output.size()}};
    const std::string head = line.dump() + "\n";
    if (!write_all(STDOUT_FILENO, head.data(), head.size()) ||
        !write_all(STDOUT_FILENO, reinterpret_cast<const char*>(outcome.output.data()),
                   outcome.output.size()))
      return 1;
  }
  return 0;
}

}  // namespace archfit::plugin
