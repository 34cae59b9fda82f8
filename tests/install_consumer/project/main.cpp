// consumer_cpp: uses the installed archfit.hpp wrapper from C++17.
// Usage: consumer_cpp <a file to scan>
#include <archfit/archfit.hpp>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer_cpp <file>\n");
    return 1;
  }
  if (!archfit::library_is_compatible()) {
    std::fprintf(stderr, "consumer_cpp: libarchfit %s does not match header %s\n",
                 archfit_version_string(), ARCHFIT_VERSION_STRING);
    return 1;
  }
  try {
    const archfit::Context context;
    const archfit::Scan scan = context.scan_file(argv[1]);
    if (scan.json().find("\"schema\":\"archfit.scan/1\"") == std::string::npos) {
      std::fprintf(stderr, "consumer_cpp: the JSON has no archfit.scan/1 schema\n");
      return 1;
    }
    std::printf("consumer_cpp: %s: %zu images\n", argv[1], scan.image_count());
    try {
      (void)context.scan_file("/nonexistent/archfit-consumer.so").image_count();
      std::fprintf(stderr, "consumer_cpp: a missing file did not throw\n");
      return 1;
    } catch (const archfit::Error& error) {
      if (error.status() != ARCHFIT_ERROR_IO) {
        std::fprintf(stderr, "consumer_cpp: a missing file gave status %d\n",
                     static_cast<int>(error.status()));
        return 1;
      }
    }
  } catch (const archfit::Error& error) {
    std::fprintf(stderr, "consumer_cpp: %s (%s)\n", error.what(),
                 archfit_status_string(error.status()));
    return 1;
  }
  std::printf("consumer_cpp: ok (libarchfit %s)\n", archfit_version_string());
  return 0;
}
