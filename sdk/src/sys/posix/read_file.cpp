#include "sys/read_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace archfit::sys {

std::optional<std::string> read_file(const std::filesystem::path& path, std::string* problem,
                                     std::uintmax_t limit) {
  const auto fail = [&](std::string why) -> std::optional<std::string> {
    if (problem) *problem = std::move(why);
    return std::nullopt;
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail("cannot read " + path.string() + ": " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int error = errno;
    ::close(fd);
    return fail("cannot read " + path.string() + ": " + std::strerror(error));
  }
  if (static_cast<std::uintmax_t>(info.st_size) > limit) {
    ::close(fd);
    return fail(path.string() + " is " + std::to_string(info.st_size) + " bytes; not read (limit " +
                std::to_string(limit) + ")");
  }
  // A file of the size stat says is read in one go; one whose size stat does
  // not know (/proc, a pipe: 0) is read in pieces to its end.
  const bool sized = info.st_size > 0;
  std::string text(sized ? static_cast<size_t>(info.st_size) : 4096, '\0');
  size_t done = 0;
  for (;;) {
    if (done == text.size()) {
      if (sized) break;  // a file that grew while read: what stat saw
      if (text.size() > limit) {
        ::close(fd);
        return fail(path.string() + " is over " + std::to_string(limit) + " bytes; not read");
      }
      text.resize(text.size() * 2);
    }
    const ssize_t got = ::read(fd, text.data() + done, text.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      return fail("cannot read " + path.string() + ": " + std::strerror(error));
    }
    if (got == 0) break;  // the end; a file that shrank while read is what is there
    done += static_cast<size_t>(got);
  }
  ::close(fd);
  text.resize(done);
  if (done > limit)
    return fail(path.string() + " is over " + std::to_string(limit) + " bytes; not read");
  return text;
}

}  // namespace archfit::sys
