#include "confirm_container.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "binary/fatbin.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::check {

namespace {

namespace fatbin = binary::fatbin;

bool launchable(const binary::Image& image) {
  return !image.relocatable && image.kind != binary::ImageKind::lto;
}

// `length` bytes from `offset`, or nothing when the file is shorter.
std::optional<std::vector<uint8_t>> read_range(std::ifstream& in, uint64_t offset,
                                               uint64_t length) {
  std::vector<uint8_t> bytes(length);
  in.seekg(static_cast<std::streamoff>(offset));
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(length)))
    return std::nullopt;
  return bytes;
}

template <typename T>
T field(const std::vector<uint8_t>& bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

std::optional<std::vector<uint8_t>> read_container(std::ifstream& in, uint64_t file_size,
                                                   uint64_t offset) {
  if (offset > file_size || file_size - offset < fatbin::kContainerHeaderSize) return std::nullopt;
  const auto header = read_range(in, offset, fatbin::kContainerHeaderSize);
  if (!header || field<uint32_t>(*header, 0) != fatbin::kContainerMagic ||
      field<uint16_t>(*header, 4) != fatbin::kContainerVersion ||
      field<uint16_t>(*header, 6) != fatbin::kContainerHeaderSize) {
    return std::nullopt;  // the file changed since it was scanned
  }
  const uint64_t entries = field<uint64_t>(*header, 8);
  if (entries > file_size - offset - fatbin::kContainerHeaderSize) return std::nullopt;
  return read_range(in, offset, fatbin::kContainerHeaderSize + entries);
}

}  // namespace

std::optional<std::vector<uint8_t>> container_to_confirm(const binary::FileScan& scan,
                                                         std::optional<std::size_t> chosen) {
  const binary::Image* image = nullptr;
  if (chosen && *chosen < scan.images.size() && launchable(scan.images[*chosen])) {
    image = &scan.images[*chosen];
  }
  for (size_t i = 0; !image && i < scan.images.size(); ++i) {
    if (launchable(scan.images[i])) image = &scan.images[i];
  }
  if (!image || scan.unreadable) return std::nullopt;

  std::ifstream in(sys::path_of_utf8(scan.path), std::ios::binary);
  std::error_code error;
  const uint64_t file_size = std::filesystem::file_size(sys::path_of_utf8(scan.path), error);
  if (!in || error) return std::nullopt;
  switch (scan.format) {
    case binary::FileFormat::cubin:
      return read_range(in, 0, file_size);
    case binary::FileFormat::ptx: {
      auto text = read_range(in, 0, file_size);
      if (text && (text->empty() || text->back() != 0)) text->push_back(0);
      return text;
    }
    case binary::FileFormat::elf:
    case binary::FileFormat::pe:
    case binary::FileFormat::fatbin:
      return read_container(in, file_size, image->container_offset);
    case binary::FileFormat::other:
      break;
  }
  return std::nullopt;
}

}  // namespace archfit::check
