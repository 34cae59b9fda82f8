#include "sys/mapped_file.hpp"

#include <utility>

namespace archfit::sys {

// Moving and ending are the same on every OS; release() is each OS's own.
MappedFile::MappedFile(MappedFile&& other) noexcept { *this = std::move(other); }

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    kind_ = other.kind_;
    address_ = std::exchange(other.address_, nullptr);
    length_ = std::exchange(other.length_, 0);
    problem_ = std::move(other.problem_);
    stamp_ = other.stamp_;
    real_path_ = std::move(other.real_path_);
  }
  return *this;
}

MappedFile::~MappedFile() { release(); }

}  // namespace archfit::sys
