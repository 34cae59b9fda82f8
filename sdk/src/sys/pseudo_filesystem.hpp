#pragma once
// Kernel pseudo-filesystems (/proc, /sys, cgroups, …) hold no libraries, and
// walking them is endless or harmful: /proc/<pid>/root leads back to /, and
// reading some of /sys has side effects. A walk passes them over. Linux asks
// statfs; Windows has no such file systems, so there the answer is always "".
#include <string>

namespace archfit::sys {

// The pseudo-filesystem `path` lies on ("proc", "sysfs", …), or "" when it is
// an ordinary one or cannot be asked.
std::string pseudo_filesystem_of(const std::string& path);

}  // namespace archfit::sys
