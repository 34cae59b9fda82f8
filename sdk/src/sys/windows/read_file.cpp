#include "sys/read_file.hpp"

#include "sys/utf8_path.hpp"
#include "sys/windows/wide.hpp"

namespace archfit::sys {

using namespace archfit::sys::windows;

std::optional<std::string> read_file(const std::filesystem::path& path, std::string* problem,
                                     std::uintmax_t limit) {
  const auto fail = [&](std::string why) -> std::optional<std::string> {
    if (problem) *problem = std::move(why);
    return std::nullopt;
  };
  const auto cannot_read = [&] {
    return fail("cannot read " + utf8_of(path) + ": " + error_text(::GetLastError()));
  };
  Handle file(::CreateFileW(os_path(path).c_str(), GENERIC_READ,
                            FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                            OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr));
  if (!file.valid()) return cannot_read();
  LARGE_INTEGER size{};
  if (!::GetFileSizeEx(file.get(), &size)) return cannot_read();
  if (static_cast<std::uintmax_t>(size.QuadPart) > limit)
    return fail(utf8_of(path) + " is " + std::to_string(size.QuadPart) +
                " bytes; not read (limit " + std::to_string(limit) + ")");
  std::string text(static_cast<size_t>(size.QuadPart), '\0');
  size_t done = 0;
  while (done < text.size()) {
    DWORD got = 0;
    const DWORD want = static_cast<DWORD>(std::min<size_t>(text.size() - done, 1u << 30));
    if (!::ReadFile(file.get(), text.data() + done, want, &got, nullptr)) return cannot_read();
    if (got == 0) break;  // a file that shrank while read is what is there
    done += got;
  }
  text.resize(done);
  return text;
}

}  // namespace archfit::sys
