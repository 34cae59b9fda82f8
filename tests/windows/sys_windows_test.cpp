// The Windows side of sys/ on its own terms (issue 35): trust read from a
// folder's ACL, the store's lock through LockFileEx and a whole file put in
// place with MoveFileEx. Built for Windows only and run under Wine
// (tests/windows/CMakeLists.txt); the Linux cases of the same services are in
// tests/unit.
#include <windows.h>
// After <windows.h>, which they need before them.
#include <aclapi.h>
#include <sddl.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sys/file_io.hpp"
#include "sys/file_lock.hpp"
#include "sys/trust.hpp"

namespace {

namespace fs = std::filesystem;

class SysWindows : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("archfit_sys_windows_" + std::to_string(::GetCurrentProcessId()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // Gives `path` exactly the ACL `sddl` describes (protected: nothing
  // inherited from above), as icacls /inheritance:r /grant would. False
  // where the file system keeps no ACL.
  static bool set_acl(const fs::path& path, const std::wstring& sddl) {
    PSECURITY_DESCRIPTOR descriptor = nullptr;
    if (!::ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl.c_str(), SDDL_REVISION_1,
                                                                &descriptor, nullptr))
      return false;
    BOOL present = FALSE, defaulted = FALSE;
    PACL dacl = nullptr;
    ::GetSecurityDescriptorDacl(descriptor, &present, &dacl, &defaulted);
    std::wstring name = path.native();
    const DWORD status =
        ::SetNamedSecurityInfoW(name.data(), SE_FILE_OBJECT,
                                DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
                                nullptr, nullptr, dacl, nullptr);
    ::LocalFree(descriptor);
    return status == ERROR_SUCCESS;
  }

  // The ACL `path` has now, as SDDL: Wine keeps an ACL only where the file
  // system holds extended attributes, and otherwise makes one up from the
  // Unix mode bits.
  static std::wstring acl_of(const fs::path& path) {
    PSECURITY_DESCRIPTOR descriptor = nullptr;
    if (::GetNamedSecurityInfoW(path.c_str(), SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, nullptr,
                                nullptr, nullptr, nullptr, &descriptor) != ERROR_SUCCESS)
      return L"";
    wchar_t* text = nullptr;
    std::wstring sddl;
    if (::ConvertSecurityDescriptorToStringSecurityDescriptorW(
            descriptor, SDDL_REVISION_1, DACL_SECURITY_INFORMATION, &text, nullptr)) {
      sddl = text;
      ::LocalFree(text);
    }
    ::LocalFree(descriptor);
    return sddl;
  }

  // This user's SID as text ("S-1-5-21-…").
  static std::wstring this_user() {
    HANDLE token = nullptr;
    std::wstring text = L"OW";
    if (!::OpenProcessToken(::GetCurrentProcess(), TOKEN_QUERY, &token)) return text;
    DWORD size = 0;
    ::GetTokenInformation(token, TokenUser, nullptr, 0, &size);
    std::string buffer(size, '\0');
    wchar_t* sid = nullptr;
    if (::GetTokenInformation(token, TokenUser, buffer.data(), size, &size) &&
        ::ConvertSidToStringSidW(reinterpret_cast<TOKEN_USER*>(buffer.data())->User.Sid, &sid)) {
      text = sid;
      ::LocalFree(sid);
    }
    ::CloseHandle(token);
    return text;
  }

  // Whether `path`'s ACL, read back, grants `who` anything.
  static bool holds_ace_for(const fs::path& path, const std::wstring& who) {
    return acl_of(path).find(L";;;" + who + L")") != std::wstring::npos;
  }

  // Full control for this user and SYSTEM, plus `more` ACEs.
  static std::wstring private_acl(const std::wstring& more = L"") {
    return L"D:P(A;OICI;FA;;;" + this_user() + L")(A;OICI;FA;;;SY)" + more;
  }

  static std::string text_of(const fs::path& path) {
    std::ifstream in(path);
    std::string text;
    in >> text;
    return text;
  }
  size_t entries() const {
    size_t count = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_)) ++count;
    return count;
  }

  fs::path dir_;
};

TEST_F(SysWindows, AFolderOnlyThisUserAndSystemMayWriteIsTrusted) {
  if (!set_acl(dir_, private_acl())) GTEST_SKIP() << "this file system keeps no ACL";
  EXPECT_EQ(archfit::sys::untrusted_because(dir_, "plugins"), "");
}

TEST_F(SysWindows, EveryoneUsersOrAuthenticatedUsersWritingIsRefusedReadingIsNot) {
  // WD: Everyone; BU: the Users group; AU: Authenticated Users. Wine keeps
  // an ACL as Unix mode bits, so only Everyone's rights survive there; the
  // others are asked where the ACL reads back as it was set.
  size_t asked = 0;
  for (const wchar_t* group : {L"WD", L"BU", L"AU"}) {
    const std::wstring who(group);
    const std::string shown(who.begin(), who.end());
    const std::wstring write_ace = L"(A;OICI;FRFW;;;" + who + L")";
    if (!set_acl(dir_, private_acl(write_ace)) || !holds_ace_for(dir_, who)) continue;
    ++asked;
    EXPECT_NE(archfit::sys::untrusted_because(dir_, "plugins"), "") << "write access for " << shown;
    ASSERT_TRUE(set_acl(dir_, private_acl(L"(A;OICI;FR;;;" + who + L")")));
    EXPECT_EQ(archfit::sys::untrusted_because(dir_, "plugins"), "") << "read access for " << shown;
  }
  if (asked == 0) GTEST_SKIP() << "this file system keeps no ACL";
}

TEST_F(SysWindows, ALockHeldByOneHandleIsRefusedToAnotherUntilReleased) {
  const fs::path lock_path = dir_ / "entry.lock";
  std::string error;
  auto held = archfit::sys::FileLock::take(lock_path, archfit::sys::FileLock::Wait::no, &error);
  ASSERT_TRUE(held.has_value()) << error;
  // LockFileEx locks per handle: a second taker in this process is refused
  // as one in another process would be.
  auto second = archfit::sys::FileLock::take(lock_path, archfit::sys::FileLock::Wait::no, &error);
  EXPECT_FALSE(second.has_value());
  EXPECT_EQ(error, "") << "held elsewhere is not an error";
  held.reset();
  auto third = archfit::sys::FileLock::take(lock_path, archfit::sys::FileLock::Wait::no, &error);
  EXPECT_TRUE(third.has_value()) << error;
}

TEST_F(SysWindows, AWholeFileReplacesTheOldOneAndAFailedReplaceLeavesItWhole) {
  const fs::path target = dir_ / "index.json";
  std::ofstream(target) << "old";
  EXPECT_EQ(archfit::sys::replace_whole_file(target, "new"), "");
  EXPECT_EQ(text_of(target), "new");
  EXPECT_EQ(entries(), 1u) << "no temporary file is left beside it";

  // Held by a reader that shares no delete right (as many Windows programs
  // open files), the file cannot be replaced: the failure names it, and the
  // file and its folder are as they were.
  const HANDLE reader = ::CreateFileW(target.c_str(), GENERIC_READ, FILE_SHARE_READ, nullptr,
                                      OPEN_EXISTING, 0, nullptr);
  ASSERT_NE(reader, INVALID_HANDLE_VALUE);
  const std::string problem = archfit::sys::replace_whole_file(target, "newer");
  ::CloseHandle(reader);
  EXPECT_NE(problem.find(target.string()), std::string::npos) << problem;
  EXPECT_EQ(text_of(target), "new");
  EXPECT_EQ(entries(), 1u) << "no temporary file is left beside it";
}

}  // namespace
