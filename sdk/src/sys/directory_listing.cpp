#include "sys/directory_listing.hpp"

#include <utility>

namespace archfit::sys {

// Moving and ending are the same on every OS; release() is each OS's own.
DirectoryListing::DirectoryListing(DirectoryListing&& other) noexcept { *this = std::move(other); }

DirectoryListing& DirectoryListing::operator=(DirectoryListing&& other) noexcept {
  if (this != &other) {
    release();
    handle_ = std::exchange(other.handle_, nullptr);
    problem_ = std::move(other.problem_);
    stamp_ = other.stamp_;
  }
  return *this;
}

DirectoryListing::~DirectoryListing() { release(); }

}  // namespace archfit::sys
