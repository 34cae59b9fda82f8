#include "sys/user_folders.hpp"

#include <vector>

#include "sys/trust.hpp"
#include "sys/utf8_path.hpp"
#include "sys/windows/wide.hpp"

// After <windows.h> (wide.hpp), which it needs before it.
#include <sddl.h>

namespace archfit::sys {

namespace fs = std::filesystem;
using namespace archfit::sys::windows;

namespace {

// "D:P(A;OICI;FA;;;<this user>)(A;OICI;FA;;;SY)": full control for this
// user and SYSTEM, inherited by what is made inside, nothing inherited from
// above — what mode 0700 is on POSIX.
std::wstring private_descriptor() {
  HANDLE token = nullptr;
  std::wstring user = L"OW";  // the owner's rights, where the token will not say
  if (::OpenProcessToken(::GetCurrentProcess(), TOKEN_QUERY, &token)) {
    DWORD size = 0;
    ::GetTokenInformation(token, TokenUser, nullptr, 0, &size);
    std::vector<unsigned char> buffer(size);
    wchar_t* text = nullptr;
    if (size > 0 && ::GetTokenInformation(token, TokenUser, buffer.data(), size, &size) &&
        ::ConvertSidToStringSidW(reinterpret_cast<TOKEN_USER*>(buffer.data())->User.Sid, &text)) {
      user = text;
      ::LocalFree(text);
    }
    ::CloseHandle(token);
  }
  return L"D:P(A;OICI;FA;;;" + user + L")(A;OICI;FA;;;SY)";
}

}  // namespace

std::optional<fs::path> user_cache_dir(std::string& why) {
  if (const char* local = trusted_path_variable("LOCALAPPDATA"))
    return fs::path(to_wide(local)) / "archfit";
  if (const char* profile = trusted_path_variable("USERPROFILE"))
    return fs::path(to_wide(profile)) / "AppData" / "Local" / "archfit";
  why = "LOCALAPPDATA nor USERPROFILE is set";
  return std::nullopt;
}

std::string create_private_directory(const fs::path& dir) {
  static const std::wstring descriptor_text = private_descriptor();
  SECURITY_ATTRIBUTES attributes{sizeof attributes, nullptr, FALSE};
  if (!::ConvertStringSecurityDescriptorToSecurityDescriptorW(
          descriptor_text.c_str(), SDDL_REVISION_1, &attributes.lpSecurityDescriptor, nullptr))
    return "cannot create " + utf8_of(dir) + ": " + error_text(::GetLastError());
  const bool made = ::CreateDirectoryW(os_path(dir).c_str(), &attributes) != 0;
  const DWORD code = made ? ERROR_SUCCESS : ::GetLastError();
  ::LocalFree(attributes.lpSecurityDescriptor);
  if (made || code == ERROR_ALREADY_EXISTS) return "";
  return "cannot create " + utf8_of(dir) + ": " + error_text(code);
}

std::string create_private_directories(const fs::path& dir) {
  std::error_code error;
  const fs::path absolute = fs::absolute(dir, error);
  fs::path partial;
  for (const auto& part : error ? dir : absolute) {
    partial /= part;
    // The drive and its root are there already, and made by no one here.
    if (partial == partial.root_name() || partial == partial.root_path()) continue;
    if (auto problem = create_private_directory(partial); !problem.empty()) return problem;
  }
  return "";
}

// Reading a folder is listing it; writing is making a file in it, which is
// what the kernel cache does next (a file made and deleted on close).
bool may_access(const fs::path& dir, Access access, std::string* why) {
  if (access == Access::read) {
    WIN32_FIND_DATAW found{};
    const HANDLE search = ::FindFirstFileW(os_path(dir / "*").c_str(), &found);
    if (search == INVALID_HANDLE_VALUE) {
      if (why) *why = error_text(::GetLastError());
      return false;
    }
    ::FindClose(search);
    return true;
  }
  const fs::path probe =
      dir / (".archfit-write-probe-" + std::to_string(::GetCurrentProcessId()) + ".tmp");
  Handle file(::CreateFileW(os_path(probe).c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW,
                            FILE_ATTRIBUTE_TEMPORARY | FILE_FLAG_DELETE_ON_CLOSE, nullptr));
  if (!file.valid()) {
    if (why) *why = error_text(::GetLastError());
    return false;
  }
  return true;
}

bool may_run(const fs::path& file) {
  const DWORD attributes = ::GetFileAttributesW(os_path(file).c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) == 0;
}

}  // namespace archfit::sys
