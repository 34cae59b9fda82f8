#pragma once
// What a file's name says about whether it can hold device code. The scanner
// reads a file's bytes to decide, never its name alone, except where reading
// would cost more than it could find: a wheel's members are decompressed
// (only the names below are), and a site-packages tree has tens of thousands
// of Python and header files that no toolchain ever puts device code in.
#include <filesystem>
#include <string_view>

namespace archfit::binary {

// The archives scan_tree opens when they are named: Python wheels.
bool is_wheel(const std::filesystem::path& path);

// By name, as a wheel lays them out: shared libraries (.so, .so.N, and
// Windows' .dll and .pyd), cubins, fatbins and PTX files.
bool may_hold_device_code(std::string_view member_name);

// Source, text, data and Python files met while walking a tree: .py, .pyi,
// .pyc, C/C++/CUDA sources and headers, .txt, .json, .yaml, images, and a
// dist-info's RECORD/METADATA. Everything else (extension-less executables,
// .so, .a, .o, .bin, unknown suffixes) is read. A file named explicitly is
// read whatever its name.
bool never_device_code(std::string_view file_name);

}  // namespace archfit::binary
