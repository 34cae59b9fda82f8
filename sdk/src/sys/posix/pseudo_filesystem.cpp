#include "sys/pseudo_filesystem.hpp"

#include <linux/magic.h>
#include <sys/vfs.h>

#include <array>
#include <utility>

namespace archfit::sys {

std::string pseudo_filesystem_of(const std::string& path) {
  // statfs's f_type, from <linux/magic.h>: the kernel's own file systems,
  // none of which a Python environment or a CUDA toolkit lives on.
  static constexpr std::array<std::pair<unsigned long, const char*>, 15> kPseudo{{
      {PROC_SUPER_MAGIC, "proc"},
      {SYSFS_MAGIC, "sysfs"},
      {DEBUGFS_MAGIC, "debugfs"},
      {TRACEFS_MAGIC, "tracefs"},
      {SECURITYFS_MAGIC, "securityfs"},
      {SELINUX_MAGIC, "selinuxfs"},
      {SMACK_MAGIC, "smackfs"},
      {CGROUP_SUPER_MAGIC, "cgroup"},
      {CGROUP2_SUPER_MAGIC, "cgroup2"},
      {DEVPTS_SUPER_MAGIC, "devpts"},
      {PSTOREFS_MAGIC, "pstore"},
      {EFIVARFS_MAGIC, "efivarfs"},
      {BINFMTFS_MAGIC, "binfmt_misc"},
      {NSFS_MAGIC, "nsfs"},
      {BPF_FS_MAGIC, "bpf"},
  }};
  struct statfs info {};
  if (::statfs(path.c_str(), &info) != 0) return "";
  for (const auto& [magic, name] : kPseudo) {
    if (static_cast<unsigned long>(info.f_type) == magic) return name;
  }
  return "";
}

}  // namespace archfit::sys
