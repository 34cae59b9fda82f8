#include "jit_command.hpp"

#include <cctype>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "binary/file_scan.hpp"
#include "binary/parallel.hpp"
#include "binary/scanner.hpp"
#include "path_options.hpp"
#include "render/jit_text.hpp"
#include "session/session.hpp"
#include "sys/file_status.hpp"
#include "sys/module_location.hpp"
#include "sys/read_file.hpp"
#include "sys/utf8_path.hpp"
#include "util/json_text.hpp"

namespace archfit::cli {

namespace fs = std::filesystem;

void JitCommand::add_to(CLI::App& app) {
  jit_ = app.add_subcommand("jit", "Compile CUDA sources at run time with NVRTC");
  jit_->require_subcommand(1);
  compile_ = jit_->add_subcommand(
      "compile", "Compile FILE.cu for one arch through the kernel cache and confirm the arch");
  compile_->add_option("source", source_, "The CUDA source")->required()->check(existing_file());
  compile_->add_option("--arch", arch_, "sm_120, sm_90a, compute_90 (PTX)")->required();
  compile_->add_option("-I,--include-path", include_dirs_, "A header directory");
  compile_->add_option("-D,--define", defines_, "A macro, NAME or NAME=VALUE");
  compile_->add_option("--option", options_, "Any other NVRTC option, e.g. --std=c++17");
  compile_->add_option("--name-expression", name_expressions_,
                       "A C++ name to instantiate and lower, e.g. 'rmsnorm<float>'");
  compile_->add_option("-o,--output", output_, "Write the image (CUBIN or PTX) here");
  compile_->add_flag("--json", json_, "Print JSON");

  bundle_ = jit_->add_subcommand(
      "bundle",
      "Compile FILE.cu for several archs at once, each in a child process, into one fatbin");
  bundle_->add_option("source", source_, "The CUDA source")->required()->check(existing_file());
  bundle_->add_option("--arch", bundle_archs_, "sm_100,sm_120,compute_120 (PTX)")
      ->required()
      ->delimiter(',');
  bundle_->add_option("-I,--include-path", include_dirs_, "A header directory");
  bundle_->add_option("-D,--define", defines_, "A macro, NAME or NAME=VALUE");
  bundle_->add_option("--option", options_, "Any other NVRTC option");
  bundle_->add_option("--name-expression", name_expressions_, "A C++ name to instantiate");
  bundle_->add_option("-o,--output", output_, "The fatbin to write")->required();
  bundle_->add_option("--jobs", jobs_, "Compiles at once (default: one per CPU)");
}

int JitCommand::run_bundle() const {
  jit::BundleRequest request;
  request.source = sys::path_of_utf8(source_);
  request.archs = bundle_archs_;
  for (const auto& dir : include_dirs_)
    request.options.push_back("-I" + sys::path_for_narrow_libraries(sys::path_of_utf8(dir)));
  for (const auto& define : defines_) request.options.push_back("-D" + define);
  request.options.insert(request.options.end(), options_.begin(), options_.end());
  request.name_expressions = name_expressions_;
  request.output = sys::path_of_utf8(output_);
  request.jobs = jobs_;
  // Each arch is compiled by this command, `archfit jit compile`, in a
  // process of its own.
  request.compiler = sys::running_module_file();
  try {
    session::Session session;
    const jit::BundleResult result = session.bundle(request);
    // Confirm from the file itself that every arch asked for is in it.
    const binary::FileScan scan = session.scan_file(sys::path_of_utf8(output_));
    std::string found;
    for (const auto& image : scan.images) found += (found.empty() ? "" : " ") + image.arch_name();
    render::BundleFacts facts;
    facts.output = output_;
    facts.scanned = found;
    facts.file_size = scan.file_size;
    facts.jobs = jobs_ ? jobs_ : binary::default_threads();
    size_t missing = 0;
    for (const auto& image : result.images) {
      const bool present = (" " + found + " ").find(" " + image.arch + " ") != std::string::npos;
      missing += !present;
      facts.present.push_back(present);
    }
    std::cout << render::bundle_text(result, facts);
    return missing ? 1 : 0;
  } catch (const jit::BundleError& error) {
    std::cerr << "archfit jit bundle: " << error.what() << '\n';
    return 1;
  }
}

bool JitCommand::chosen() const { return jit_ && jit_->parsed(); }

int JitCommand::run() const {
  if (bundle_->parsed()) return run_bundle();
  std::string problem;
  auto source = sys::read_file(sys::path_of_utf8(source_), &problem);
  if (!source) {
    std::cerr << "archfit jit compile: " << problem << '\n';
    return 2;
  }
  jit::CompileRequest request;
  request.source = std::move(*source);
  request.source_name = sys::utf8_of(sys::path_of_utf8(source_).filename());
  request.target = arch_;
  for (const auto& dir : include_dirs_)
    request.options.push_back("-I" + sys::path_for_narrow_libraries(sys::path_of_utf8(dir)));
  for (const auto& define : defines_) request.options.push_back("-D" + define);
  request.options.insert(request.options.end(), options_.begin(), options_.end());
  request.name_expressions = name_expressions_;

  try {
    session::Session session;  // one run, one Session: the flows' owner
    // NVRTC is known by its recorded facts and loaded only on a miss.
    const jit::CachedCompile compiled = session.compile(request);
    const auto runtime = session.jit();
    const jit::KernelCache& cache = runtime->cache();
    const std::string nvrtc_description = runtime->nvrtc().facts(runtime->cache()).description;
    const bool nvrtc_loaded = runtime->nvrtc().is_loaded();

    // Confirm the arch from the image itself, with archfit's own scanner.
    const binary::FileScan scan = session.scan_bytes(*compiled.image, source_ + " (output)");
    std::string found;
    for (const auto& image : scan.images) found += (found.empty() ? "" : " ") + image.arch_name();
    const bool confirmed = scan.images.size() == 1 && scan.images[0].arch_name() == arch_;
    if (!output_.empty()) jit::write_image_file(compiled, sys::path_of_utf8(output_));
    if (json_) {
      std::cout << util::json_text(
                       nlohmann::json{
                           {"nvrtc", nvrtc_description},
                           {"nvrtc_loaded", nvrtc_loaded},
                           {"target", arch_},
                           {"format", jit::to_string(compiled.format)},
                           {"bytes", compiled.image->size()},
                           {"key", compiled.key},
                           {"cache", jit::to_string(compiled.source)},
                           {"milliseconds", compiled.milliseconds},
                           {"scanned", found},
                           {"confirmed", confirmed},
                           {"cache_dir",
                            cache.directory() ? sys::utf8_of(*cache.directory()) : std::string()}},
                       2)
                << '\n';
    } else {
      render::CompileFacts facts;
      facts.nvrtc = nvrtc_description;
      facts.nvrtc_loaded = nvrtc_loaded;
      facts.target = arch_;
      facts.scanned = found;
      facts.confirmed = confirmed;
      facts.cache_dir = cache.directory();
      facts.output = output_;
      std::cout << render::compile_text(compiled, facts);
    }
    return confirmed ? 0 : 1;
  } catch (const jit::NvrtcCompileError& error) {
    std::cerr << "archfit jit compile: " << error.what() << '\n';  // the whole log
    return 1;
  } catch (const jit::NvrtcError& error) {
    std::cerr << "archfit jit compile: " << error.what() << '\n';
    return 2;
  }
}

}  // namespace archfit::cli
