#pragma once
// How GPU names are compared: as lower-case alphanumeric words without a
// leading "NVIDIA" or "GeForce", so "NVIDIA GeForce RTX 5090", "rtx 5090" and
// "RTX5090" are one name.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace archfit::kb {

// The words of a name, lower case, split at anything not a letter or digit,
// with leading "nvidia"/"geforce" words dropped: {"rtx", "5090"}.
std::vector<std::string> gpu_name_words(std::string_view name);

// The words joined: the key two names share when they are the same GPU.
std::string gpu_name_key(std::string_view name);

// Edit distance with adjacent transpositions counted as one edit.
size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace archfit::kb
