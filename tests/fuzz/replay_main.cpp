// Replays inputs through a fuzz target without libFuzzer, so that every
// build (gcc, no sanitizer) runs the inputs that once crashed a target:
//
//   archfit_fuzz_replay_<target> FILE_OR_DIR ...
//
// Each file is one input. Exit 0 when every input returned; a crash is the
// test failing.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  std::printf("replaying %s (%zu bytes)\n", file.c_str(), bytes.size());
  std::fflush(stdout);
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int replayed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path given = argv[i];
    if (std::filesystem::is_directory(given)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(given))
        if (entry.is_regular_file()) replayed += replay(entry.path());
    } else {
      replayed += replay(given);
    }
  }
  std::printf("%d inputs replayed, none crashed\n", replayed);
  return replayed > 0 ? 0 : 1;
}
