#include "cached_compile.hpp"

#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>

#include "compat/arch.hpp"
#include "jit/nvrtc/nvrtc_error.hpp"
#include "sys/read_file.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::jit {

namespace fs = std::filesystem;

namespace {

// An -I directory's files beyond these are not hashed: that is not a header
// directory but a mistake, and the key says so rather than reading gigabytes.
constexpr size_t kMaxIncludeFiles = 4096;
constexpr uint64_t kMaxIncludeBytes = 64ull << 20;

// "-I DIR", "-IDIR", "--include-path=DIR" → DIR; "" for other options.
std::string include_dir(const std::vector<std::string>& options, size_t& i) {
  const std::string& option = options[i];
  if (option == "-I" && i + 1 < options.size()) return options[++i];
  if (option.rfind("-I", 0) == 0 && option.size() > 2) return option.substr(2);
  constexpr std::string_view kLong = "--include-path=";
  if (option.rfind(kLong, 0) == 0) return option.substr(kLong.size());
  return {};
}

void add_include_files(const fs::path& dir, CacheKeyInput& input) {
  std::error_code error;
  size_t files = 0;
  uint64_t bytes = 0;
  for (fs::recursive_directory_iterator it(dir, error), end; !error && it != end;
       it.increment(error)) {
    if (!it->is_regular_file(error)) continue;
    if (++files > kMaxIncludeFiles || (bytes += it->file_size(error)) > kMaxIncludeBytes) {
      input.headers.emplace_back("-I " + dir.string(), "(too large to hash)");
      return;
    }
    input.headers.emplace_back(it->path().string(),
                               sys::read_file(it->path()).value_or(std::string()));
  }
}

// A cache entry's payload: "AFJ1", the lowered names (count, then each
// expression and name, length-prefixed, little-endian u32), then the image.
constexpr char kPayloadMagic[4] = {'A', 'F', 'J', '1'};

void put_u32(std::vector<std::byte>& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::byte>((value >> (8 * i)) & 0xff));
}

void put_text(std::vector<std::byte>& out, const std::string& text) {
  put_u32(out, static_cast<uint32_t>(text.size()));
  for (const char c : text) out.push_back(static_cast<std::byte>(c));
}

std::vector<std::byte> encode_payload(const CompileResult& result) {
  std::vector<std::byte> out;
  for (const char c : kPayloadMagic) out.push_back(static_cast<std::byte>(c));
  put_u32(out, static_cast<uint32_t>(result.lowered_names.size()));
  for (const auto& [expression, name] : result.lowered_names) {
    put_text(out, expression);
    put_text(out, name);
  }
  out.insert(out.end(), result.image.begin(), result.image.end());
  return out;
}

// The cache verified the bytes' checksum; a payload that still does not parse
// was written by something else, and is an error rather than a guess.
void decode_payload(const std::vector<std::byte>& payload, CachedCompile& out) {
  size_t at = 0;
  auto need = [&](size_t bytes) {
    if (payload.size() - at < bytes)
      throw NvrtcError("kernel cache entry " + out.key + " is not an archfit JIT image");
  };
  auto u32 = [&] {
    need(4);
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i)
      value |= static_cast<uint32_t>(std::to_integer<uint8_t>(payload[at + i])) << (8 * i);
    at += 4;
    return value;
  };
  auto text = [&] {
    const uint32_t size = u32();
    need(size);
    std::string value(reinterpret_cast<const char*>(payload.data() + at), size);
    at += size;
    return value;
  };
  need(4);
  if (std::memcmp(payload.data(), kPayloadMagic, 4) != 0)
    throw NvrtcError("kernel cache entry " + out.key + " is not an archfit JIT image");
  at = 4;
  for (uint32_t count = u32(); count > 0; --count) {
    std::string expression = text();
    out.lowered_names.emplace_back(std::move(expression), text());
  }
  out.image = std::make_shared<const std::vector<std::byte>>(payload.begin() + at, payload.end());
}

}  // namespace

std::string compile_key(const Nvrtc& nvrtc, const CompileRequest& request) {
  return compile_key(facts_of(nvrtc), request);
}

std::string compile_key(const NvrtcFacts& nvrtc, const CompileRequest& request) {
  CacheKeyInput input;
  input.nvrtc_version = nvrtc.version.to_string();
  input.nvrtc_build = nvrtc.build;
  input.target = request.target;
  input.options = request.options;
  // Name expressions decide which templates are instantiated.
  for (const auto& expression : request.name_expressions)
    input.options.push_back("name-expression=" + expression);
  input.source_name = request.source_name;
  input.source = request.source;
  input.headers.assign(request.headers.begin(), request.headers.end());
  for (size_t i = 0; i < request.options.size(); ++i) {
    if (const std::string dir = include_dir(request.options, i); !dir.empty())
      add_include_files(sys::path_of_utf8(dir), input);
  }
  return cache_key(input);
}

namespace {

CachedCompile compile_through(KernelCache& cache, const CompileRequest& request,
                              const NvrtcFacts& facts, const std::function<const Nvrtc&()>& nvrtc) {
  const auto start = std::chrono::steady_clock::now();
  CachedCompile out;
  out.key = compile_key(facts, request);
  const auto target = compat::parse_target(request.target);
  out.format = target && target->ptx ? ImageFormat::ptx : ImageFormat::cubin;
  const CacheResult result =
      cache.get_or_build(out.key, [&] { return encode_payload(nvrtc().compile(request)); });
  decode_payload(*result.image, out);
  out.source = result.source;
  out.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace

CachedCompile compile_cached(const Nvrtc& nvrtc, KernelCache& cache,
                             const CompileRequest& request) {
  return compile_through(cache, request, facts_of(nvrtc), [&]() -> const Nvrtc& { return nvrtc; });
}

CachedCompile compile_cached(LazyNvrtc& nvrtc, KernelCache& cache, const CompileRequest& request) {
  return compile_through(cache, request, nvrtc.facts(cache),
                         [&]() -> const Nvrtc& { return nvrtc.loaded(cache); });
}

CachedCompile compile_cached(LazyNvrtc& nvrtc, KernelCache& cache, CompileRequest request,
                             const PrepareRequest& prepare) {
  for (int attempt = 0;; ++attempt) {
    prepare(nvrtc.facts(cache), request);
    try {
      return compile_cached(nvrtc, cache, request);
    } catch (const StaleNvrtcFacts&) {
      if (attempt > 0) throw;  // stale twice: something keeps changing NVRTC under us
    }
  }
}

void write_image_file(const CachedCompile& compiled, const std::filesystem::path& file) {
  const auto& bytes = *compiled.image;
  size_t size = bytes.size();
  if (compiled.format == ImageFormat::ptx && size && bytes[size - 1] == std::byte{0}) --size;
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(size));
  out.close();
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

}  // namespace archfit::jit
