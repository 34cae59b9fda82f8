#include "sys/file_io.hpp"

#include <utility>

namespace archfit::sys {

// Moving and ending are the same on every OS; release() is each OS's own.
NoFollowFile::NoFollowFile(NoFollowFile&& other) noexcept { *this = std::move(other); }

NoFollowFile& NoFollowFile::operator=(NoFollowFile&& other) noexcept {
  if (this != &other) {
    release();
    kind_ = other.kind_;
    handle_ = std::exchange(other.handle_, -1);
    stamp_ = other.stamp_;
    problem_ = std::move(other.problem_);
  }
  return *this;
}

NoFollowFile::~NoFollowFile() { release(); }

}  // namespace archfit::sys
