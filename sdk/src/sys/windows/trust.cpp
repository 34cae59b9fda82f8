#include "sys/trust.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "sys/file_io.hpp"
#include "sys/file_status.hpp"
#include "sys/utf8_path.hpp"
#include "sys/windows/wide.hpp"

// After <windows.h> (wide.hpp), which it needs before it.
#include <aclapi.h>
#include <sddl.h>

namespace archfit::sys {

namespace fs = std::filesystem;
using namespace archfit::sys::windows;

namespace {

// Rights that let someone change what a file or folder holds: write or add
// to it, delete it, or take it over by rewriting its ACL or owner.
constexpr ACCESS_MASK kWriteRights = FILE_WRITE_DATA | FILE_APPEND_DATA | FILE_WRITE_EA |
                                     FILE_DELETE_CHILD | DELETE | WRITE_DAC | WRITE_OWNER |
                                     GENERIC_WRITE | GENERIC_ALL;
// For a folder on the way to a file (the chain): adding a new entry
// (FILE_ADD_FILE is FILE_WRITE_DATA on a folder) replaces nothing, as the
// sticky bit has it on POSIX. Every user may add folders to C:\ itself.
constexpr ACCESS_MASK kReplaceRights =
    FILE_DELETE_CHILD | DELETE | WRITE_DAC | WRITE_OWNER | GENERIC_ALL;

struct Sid {
  std::vector<unsigned char> bytes;
  PSID get() const { return const_cast<unsigned char*>(bytes.data()); }
};

Sid well_known(WELL_KNOWN_SID_TYPE type) {
  Sid sid;
  DWORD size = SECURITY_MAX_SID_SIZE;
  sid.bytes.resize(size);
  if (!::CreateWellKnownSid(type, nullptr, sid.get(), &size)) sid.bytes.clear();
  return sid;
}

Sid from_string(const wchar_t* text) {
  Sid sid;
  PSID made = nullptr;
  if (::ConvertStringSidToSidW(text, &made)) {
    const DWORD size = ::GetLengthSid(made);
    sid.bytes.assign(static_cast<unsigned char*>(made), static_cast<unsigned char*>(made) + size);
    ::LocalFree(made);
  }
  return sid;
}

Sid this_user() {
  Sid sid;
  HANDLE token = nullptr;
  if (!::OpenProcessToken(::GetCurrentProcess(), TOKEN_QUERY, &token)) return sid;
  DWORD size = 0;
  ::GetTokenInformation(token, TokenUser, nullptr, 0, &size);
  std::vector<unsigned char> buffer(size);
  if (size > 0 && ::GetTokenInformation(token, TokenUser, buffer.data(), size, &size)) {
    const PSID user = reinterpret_cast<TOKEN_USER*>(buffer.data())->User.Sid;
    const DWORD length = ::GetLengthSid(user);
    sid.bytes.assign(static_cast<unsigned char*>(user), static_cast<unsigned char*>(user) + length);
  }
  ::CloseHandle(token);
  return sid;
}

bool same(PSID a, const Sid& b) { return !b.bytes.empty() && ::EqualSid(a, b.get()); }

// "BUILTIN\Users"; the SID's text where no name is found.
std::string name_of(PSID sid) {
  wchar_t name[256], domain[256];
  DWORD name_size = 256, domain_size = 256;
  SID_NAME_USE use{};
  if (::LookupAccountSidW(nullptr, sid, name, &name_size, domain, &domain_size, &use))
    return domain_size > 0 ? to_utf8(domain) + "\\" + to_utf8(name) : to_utf8(name);
  wchar_t* text = nullptr;
  std::string out = "an unknown account";
  if (::ConvertSidToStringSidW(sid, &text)) {
    out = to_utf8(text);
    ::LocalFree(text);
  }
  return out;
}

std::string sid_text(PSID sid) {
  wchar_t* text = nullptr;
  if (!::ConvertSidToStringSidW(sid, &text)) return "";
  std::string out = to_utf8(text);
  ::LocalFree(text);
  return out;
}

// Who may own what archfit trusts: this user, the administrators, SYSTEM,
// and TrustedInstaller (which owns what Windows and its installers put in
// Program Files and System32).
bool trusted_owner(PSID owner) {
  static const Sid user = this_user();
  static const Sid administrators = well_known(WinBuiltinAdministratorsSid);
  static const Sid system = well_known(WinLocalSystemSid);
  static const Sid installer =
      from_string(L"S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464");
  return same(owner, user) || same(owner, administrators) || same(owner, system) ||
         same(owner, installer);
}

// Those who are "others": everyone, every signed-in user, the Users group.
bool is_others(PSID who) {
  static const Sid everyone = well_known(WinWorldSid);
  static const Sid authenticated = well_known(WinAuthenticatedUserSid);
  static const Sid users = well_known(WinBuiltinUsersSid);
  return same(who, everyone) || same(who, authenticated) || same(who, users);
}

struct SecurityInfo {
  PSECURITY_DESCRIPTOR descriptor = nullptr;
  PSID owner = nullptr;
  PACL dacl = nullptr;
  ~SecurityInfo() {
    if (descriptor) ::LocalFree(descriptor);
  }
};

std::string judge(const fs::path& path, const SecurityInfo& info, std::string_view what,
                  ACCESS_MASK forbidden) {
  const std::string shown = utf8_of(path);
  if (info.owner && !trusted_owner(info.owner)) {
    return "it is owned by " + name_of(info.owner) +
           ", not by this user, an administrator or SYSTEM; use a folder of your own, or take "
           "it over (takeown /f \"" +
           shown + "\")";
  }
  if (info.dacl == nullptr) {
    return "it has no access control list, so anyone could plant " + std::string(what) +
           " there; make it owner-only (icacls \"" + shown +
           "\" /inheritance:r /grant:r \"%USERNAME%:F\")";
  }
  for (DWORD index = 0; index < info.dacl->AceCount; ++index) {
    void* raw = nullptr;
    if (!::GetAce(info.dacl, index, &raw)) continue;
    const auto* header = static_cast<ACE_HEADER*>(raw);
    if (header->AceType != ACCESS_ALLOWED_ACE_TYPE || (header->AceFlags & INHERIT_ONLY_ACE) != 0)
      continue;
    const auto* ace = static_cast<ACCESS_ALLOWED_ACE*>(raw);
    const PSID who = const_cast<DWORD*>(&ace->SidStart);
    if ((ace->Mask & forbidden) == 0 || !is_others(who)) continue;
    return "it is writable by " + name_of(who) +
           " (its access control list), so someone else could plant " + std::string(what) +
           " there; make it owner-only (icacls \"" + shown + "\" /inheritance:d /remove:g *" +
           sid_text(who) + ")";
  }
  return "";
}

std::string untrusted_by_acl(const fs::path& path, std::string_view what, ACCESS_MASK forbidden) {
  SecurityInfo info;
  if (::GetNamedSecurityInfoW(os_path(path).c_str(), SE_FILE_OBJECT,
                              OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION, &info.owner,
                              nullptr, &info.dacl, nullptr, &info.descriptor) != ERROR_SUCCESS)
    return "";  // cannot be asked: the caller meets the path its own way
  return judge(path, info, what, forbidden);
}

}  // namespace

// Windows has no setuid: a variable is the user's own.
const char* trusted_path_variable(const char* name) {
  static std::mutex mutex;
  static std::map<std::string, std::string> values;  // kept: callers hold the pointer
  const wchar_t* value = ::_wgetenv(to_wide(name).c_str());
  if (value == nullptr || *value == L'\0') return nullptr;
  const std::lock_guard lock(mutex);
  std::string& kept = values[name];
  kept = to_utf8(value);
  return kept.c_str();
}

bool running_as_superuser() {
  HANDLE token = nullptr;
  if (!::OpenProcessToken(::GetCurrentProcess(), TOKEN_QUERY, &token)) return false;
  TOKEN_ELEVATION elevation{};
  DWORD size = sizeof elevation;
  const bool elevated = ::GetTokenInformation(token, TokenElevation, &elevation, size, &size) &&
                        elevation.TokenIsElevated != 0;
  ::CloseHandle(token);
  return elevated;
}

std::string untrusted_because(const fs::path& path, std::string_view what, OtherWriters) {
  return untrusted_by_acl(path, what, kWriteRights);
}

std::string untrusted_because(const fs::path& path, const NoFollowFile& file, std::string_view what,
                              OtherWriters) {
  SecurityInfo info;
  if (::GetSecurityInfo(reinterpret_cast<HANDLE>(file.native_handle()), SE_FILE_OBJECT,
                        OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION, &info.owner,
                        nullptr, &info.dacl, nullptr, &info.descriptor) != ERROR_SUCCESS)
    return "";
  return judge(path, info, what, kWriteRights);
}

std::string untrusted_below(const fs::path& root, const fs::path& inside, std::string_view what,
                            OtherWriters allowed) {
  fs::path folder = root;
  for (const auto& part : inside.lexically_relative(root)) {
    if (part == ".") continue;
    folder /= part;
    const auto status = file_status(folder, Links::not_followed);
    if (!status) return "";  // not made yet: made private when needed
    if (status->type == FileType::link) {
      return utf8_of(folder) + " is a symbolic link where archfit keeps a folder of its own, " +
             "so someone replaced it; remove it (rmdir \"" + utf8_of(folder) + "\")";
    }
    if (status->type != FileType::directory) return utf8_of(folder) + " is not a directory";
    if (auto why = untrusted_because(folder, what, allowed); !why.empty())
      return utf8_of(folder) + ": " + why;
  }
  return "";
}

std::string untrusted_path_chain(const fs::path& file, std::string_view what, OtherWriters) {
  const std::string real = real_path(utf8_of(file));
  if (real.empty()) return "";
  std::error_code error;
  const fs::path given = fs::absolute(file, error).lexically_normal();
  // The path as given, then where it resolves: each folder on the way may
  // let others add entries but not replace them; the file itself, nothing.
  for (const fs::path& path : {given, path_of_utf8(real)}) {
    fs::path step;
    for (const auto& part : path) {
      step /= part;
      if (step == path.root_name()) continue;  // "C:" alone is a drive's working folder
      const auto status = file_status(step, Links::not_followed);
      if (!status) return "";  // gone meanwhile: the caller finds out
      if (status->type == FileType::link) continue;
      const bool last = step == path;
      if (auto why = untrusted_by_acl(step, what, last ? kWriteRights : kReplaceRights);
          !why.empty())
        return step == given ? why : utf8_of(step) + ": " + why;
    }
  }
  return "";
}

}  // namespace archfit::sys
