#include "sys/run_program.hpp"

#include <algorithm>
#include <atomic>
#include <cwchar>
#include <functional>
#include <string_view>
#include <system_error>
#include <thread>

#include "sys/utf8_path.hpp"
#include "sys/windows/wide.hpp"

namespace archfit::sys {

using namespace archfit::sys::windows;

namespace {

// One word of a command line as the C runtime's parser reads it back
// (CommandLineToArgvW's rules): quoted when it holds a space, a tab or a
// quote or is empty; backslashes doubled only before a quote.
void append_word(std::wstring& line, const std::wstring& word) {
  if (!line.empty()) line += L' ';
  if (!word.empty() && word.find_first_of(L" \t\n\v\"") == std::wstring::npos) {
    line += word;
    return;
  }
  line += L'"';
  size_t backslashes = 0;
  for (const wchar_t c : word) {
    if (c == L'\\') {
      ++backslashes;
      continue;
    }
    line.append(c == L'"' ? backslashes * 2 + 1 : backslashes, L'\\');
    backslashes = 0;
    line += c;
  }
  line.append(backslashes * 2, L'\\');
  line += L'"';
}

[[noreturn]] void fail(const char* what) {
  throw std::system_error(static_cast<int>(::GetLastError()), std::system_category(), what);
}

// Whether process `id` runs conhost.exe: the console host Windows (and
// Wine) starts for a console program, inside its job, and ends with it.
bool is_console_host(ULONG_PTR id) {
  Handle process(::OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, static_cast<DWORD>(id)));
  if (!process.valid()) return false;
  wchar_t image[MAX_PATH];
  DWORD size = MAX_PATH;
  if (!::QueryFullProcessImageNameW(process.get(), 0, image, &size)) return false;
  const std::wstring_view path(image, size);
  const std::wstring_view name = path.substr(path.find_last_of(L"\\/") + 1);
  return ::_wcsicmp(std::wstring(name).c_str(), L"conhost.exe") == 0;
}

// The processes in `job` other than `program` and its console host: what
// the program started and left running. By their IDs, not the job's count
// of active processes, which holds the console host and may still hold the
// program itself for a moment after it ended.
size_t processes_left_in(HANDLE job, DWORD program) {
  struct IdList {
    JOBOBJECT_BASIC_PROCESS_ID_LIST head;
    ULONG_PTR more_ids[255];
  } list{};
  list.head.NumberOfAssignedProcesses = 256;
  if (!::QueryInformationJobObject(job, JobObjectBasicProcessIdList, &list, sizeof list, nullptr) &&
      ::GetLastError() != ERROR_MORE_DATA)
    return 0;
  const ULONG_PTR* ids = list.head.ProcessIdList;
  size_t left = 0;
  for (DWORD i = 0; i < list.head.NumberOfProcessIdsInList; ++i) {
    if (ids[i] != ULONG_PTR{program} && !is_console_host(ids[i])) ++left;
  }
  // Past the list's room: counted as left, not asked for their names.
  return left + (list.head.NumberOfAssignedProcesses - list.head.NumberOfProcessIdsInList);
}

}  // namespace

// CreateProcessW, never a shell (a path is the user's and must not be
// parsed); stdin from NUL; only the pipe and stderr inherited (a handle
// list); in a job object, so that a program past its time limit is stopped
// together with whatever it started, and nothing outlives this process.
ProgramResult run_program(const std::filesystem::path& program,
                          const std::vector<std::string>& args, const ProgramOptions& options) {
  SECURITY_ATTRIBUTES inheritable{sizeof inheritable, nullptr, TRUE};
  HANDLE read_raw = nullptr, write_raw = nullptr;
  if (!::CreatePipe(&read_raw, &write_raw, &inheritable, 0)) fail("cannot create a pipe");
  Handle read_end(read_raw), write_end(write_raw);
  ::SetHandleInformation(read_end.get(), HANDLE_FLAG_INHERIT, 0);
  Handle null_input(::CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE,
                                  &inheritable, OPEN_EXISTING, 0, nullptr));
  // stderr: the pipe of stdout (merged), a pipe of its own (captured), or a
  // copy of this process's own (inherited).
  Handle error_read_end, error_copy;
  HANDLE error_target = write_end.get();
  if (options.standard_error == StandardError::captured) {
    HANDLE error_read_raw = nullptr, error_write_raw = nullptr;
    if (!::CreatePipe(&error_read_raw, &error_write_raw, &inheritable, 0))
      fail("cannot create a pipe");
    error_read_end.reset(error_read_raw);
    error_copy.reset(error_write_raw);
    ::SetHandleInformation(error_read_end.get(), HANDLE_FLAG_INHERIT, 0);
    error_target = error_copy.get();
  } else if (options.standard_error == StandardError::inherited) {
    HANDLE copy = nullptr;
    const HANDLE own = ::GetStdHandle(STD_ERROR_HANDLE);
    if (own != nullptr && own != INVALID_HANDLE_VALUE &&
        ::DuplicateHandle(::GetCurrentProcess(), own, ::GetCurrentProcess(), &copy, 0, TRUE,
                          DUPLICATE_SAME_ACCESS))
      error_copy.reset(copy);
    error_target = error_copy.valid() ? error_copy.get() : write_end.get();
  }

  std::vector<HANDLE> inherited{null_input.get(), write_end.get()};
  if (error_copy.valid()) inherited.push_back(error_copy.get());
  SIZE_T list_size = 0;
  ::InitializeProcThreadAttributeList(nullptr, 1, 0, &list_size);
  std::vector<unsigned char> list_bytes(list_size);
  auto* list = reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(list_bytes.data());
  if (!::InitializeProcThreadAttributeList(list, 1, 0, &list_size))
    fail("cannot prepare the program's handles");
  ::UpdateProcThreadAttribute(list, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherited.data(),
                              inherited.size() * sizeof(HANDLE), nullptr, nullptr);

  STARTUPINFOEXW startup{};
  startup.StartupInfo.cb = sizeof startup;
  startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  startup.StartupInfo.hStdInput = null_input.get();
  startup.StartupInfo.hStdOutput = write_end.get();
  startup.StartupInfo.hStdError = error_target;
  startup.lpAttributeList = list;

  std::wstring command_line;
  append_word(command_line, program.native());
  for (const auto& arg : args) append_word(command_line, to_wide(arg));

  Handle job(::CreateJobObjectW(nullptr, nullptr));
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
  if (options.max_memory != 0) {
    limits.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_PROCESS_MEMORY;
    limits.ProcessMemoryLimit = options.max_memory;
  }
  if (job.valid())
    ::SetInformationJobObject(job.get(), JobObjectExtendedLimitInformation, &limits, sizeof limits);

  // This process's environment with the options' variables set over it, as
  // the block CreateProcessW takes: NAME=VALUE\0 … \0.
  std::wstring environment_block;
  if (!options.environment.empty()) {
    if (wchar_t* own = ::GetEnvironmentStringsW()) {
      for (const wchar_t* entry = own; *entry != L'\0'; entry += std::wcslen(entry) + 1) {
        const std::wstring_view text = entry;
        // "=C:=C:\\…" entries (a drive's current folder) start with '='.
        const std::wstring_view name = text.substr(0, text.find(L'=', 1));
        const bool replaced = std::any_of(
            options.environment.begin(), options.environment.end(), [&](const auto& set) {
              return ::_wcsicmp(to_wide(set.first).c_str(), std::wstring(name).c_str()) == 0;
            });
        if (!replaced) environment_block.append(text).push_back(L'\0');
      }
      ::FreeEnvironmentStringsW(own);
    }
    for (const auto& [name, value] : options.environment)
      environment_block.append(to_wide(name + "=" + value)).push_back(L'\0');
    environment_block.push_back(L'\0');
  }

  PROCESS_INFORMATION process{};
  const BOOL started = ::CreateProcessW(
      os_path(program).c_str(), command_line.data(), nullptr, nullptr, TRUE,
      CREATE_SUSPENDED | CREATE_NO_WINDOW | EXTENDED_STARTUPINFO_PRESENT |
          CREATE_UNICODE_ENVIRONMENT,
      environment_block.empty() ? nullptr : environment_block.data(),
      options.working_directory.empty() ? nullptr : os_path(options.working_directory).c_str(),
      &startup.StartupInfo, &process);
  ::DeleteProcThreadAttributeList(list);
  if (!started) fail(("cannot run " + utf8_of(program)).c_str());
  Handle process_handle(process.hProcess), thread_handle(process.hThread);
  if (job.valid()) ::AssignProcessToJobObject(job.get(), process_handle.get());
  ::ResumeThread(thread_handle.get());
  // The child holds its own copies now: the pipe ends when it and whatever
  // it started are done.
  write_end.reset();
  error_copy.reset();
  null_input.reset();

  ProgramResult result;
  // Each pipe read on a thread of its own as it fills: a program that writes
  // much to one while nothing reads it would block for good.
  std::atomic<size_t> written{0};  // by the program to both pipes
  std::atomic<bool> overflowed{false};
  const auto read_into = [&](HANDLE pipe, std::string& text) {
    char buffer[65536];
    DWORD got = 0;
    while (::ReadFile(pipe, buffer, sizeof buffer, &got, nullptr) && got > 0) {
      const size_t room = options.max_output - std::min(options.max_output, text.size());
      text.append(buffer, std::min<size_t>(room, got));
      if (options.stop_past_max_output && (written += got) > options.max_output &&
          !overflowed.exchange(true)) {
        if (job.valid()) {
          ::TerminateJobObject(job.get(), 1);
        } else {
          ::TerminateProcess(process_handle.get(), 1);
        }
      }
    }
  };
  std::thread reader(read_into, read_end.get(), std::ref(result.output));
  std::thread error_reader;
  if (error_read_end.valid())
    error_reader = std::thread(read_into, error_read_end.get(), std::ref(result.error_output));
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  const auto left_ms = [&] {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return static_cast<DWORD>(std::max<long long>(0, left.count()));
  };
  if (::WaitForSingleObject(process_handle.get(), left_ms()) == WAIT_TIMEOUT) {
    result.timed_out = true;
    if (job.valid()) {
      ::TerminateJobObject(job.get(), 1);
    } else {
      ::TerminateProcess(process_handle.get(), 1);
    }
    ::WaitForSingleObject(process_handle.get(), INFINITE);
  }
  result.output_overflowed = overflowed;
  if (options.end_what_it_leaves && job.valid() && !result.timed_out && !overflowed) {
    result.left_running = processes_left_in(job.get(), process.dwProcessId);
    if (result.left_running > 0) ::TerminateJobObject(job.get(), 1);
  }
  // What it started may still hold the pipe: ended with the job at the limit.
  if (job.valid()) {
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION accounting{};
    for (;;) {
      if (!::QueryInformationJobObject(job.get(), JobObjectBasicAccountingInformation, &accounting,
                                       sizeof accounting, nullptr) ||
          accounting.ActiveProcesses == 0)
        break;
      if (left_ms() == 0) {
        ::TerminateJobObject(job.get(), 1);
        break;
      }
      ::Sleep(10);
    }
  }
  reader.join();
  if (error_reader.joinable()) error_reader.join();
  DWORD code = 0;
  ::GetExitCodeProcess(process_handle.get(), &code);
  if (!result.timed_out && !overflowed) {
    // An NTSTATUS error (0xC…) is a crash, as a signal is on POSIX.
    if ((code & 0xF0000000u) == 0xC0000000u) {
      result.signal = static_cast<int>(code);
    } else {
      result.exited = true;
      result.exit_status = static_cast<int>(code);
    }
  }
  return result;
}

}  // namespace archfit::sys
