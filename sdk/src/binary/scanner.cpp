#include "scanner.hpp"

#include <algorithm>

#include "byte_reader.hpp"
#include "cubin.hpp"
#include "elf.hpp"
#include "elf_host_binary.hpp"
#include "fatbin.hpp"
#include "parallel.hpp"
#include "payload.hpp"
#include "pe.hpp"
#include "pe_host_binary.hpp"
#include "ptx.hpp"

namespace archfit::binary {

namespace {

// PTX modules open with comments and then .version; 64 KiB is ample to find it.
constexpr uint64_t kPtxSniffBytes = 64 * 1024;

// Data sections larger than this are split into chunks scanned in parallel.
constexpr uint64_t kMinChunk = 8u << 20;

struct Region {
  uint64_t begin = 0, end = 0, start_limit = 0;
  RegionLayout layout = RegionLayout::embedded;
  RegionSource source;
};

void add_region(std::vector<Region>& plan, uint64_t begin, uint64_t end, RegionLayout layout,
                RegionSource source, unsigned threads) {
  // Packed regions are walked header to header, which is fast; only embedded
  // ones are read byte by byte and are worth splitting.
  const uint64_t size = end - begin;
  const uint64_t chunk =
      layout == RegionLayout::embedded && threads > 1
          ? std::max<uint64_t>(kMinChunk, (size / (threads * 4) + 63) & ~uint64_t{63})
          : size;
  for (uint64_t at = begin; at < end; at += chunk) {
    plan.push_back({at, end, std::min(end, at + chunk), layout, source});
  }
}

// Merges the chunks of each section in file order. A chunk's search may start
// inside a container that the section's earlier chunk read; what it finds
// there is payload, not a container, and is dropped.
void merge_regions(const std::vector<Region>& plan, std::vector<RegionScan>& parts,
                   FileScan& scan) {
  size_t images = scan.images.size();
  for (const auto& part : parts) images += part.images.size();
  scan.images.reserve(images);
  uint64_t covered_until = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    RegionScan& part = parts[i];
    if (i == 0 || plan[i].end != plan[i - 1].end) covered_until = 0;  // a new section
    // Only what lies inside an earlier chunk's container is dropped; a problem
    // before one of this chunk's own containers is real.
    const uint64_t covered_by_earlier_chunks = covered_until;
    size_t image = 0;
    for (const auto& container : part.containers) {
      const size_t first = image;
      while (image < part.images.size() && part.images[image].container_offset == container.begin)
        ++image;
      if (container.begin < covered_until) continue;
      covered_until = container.end;
      ++scan.containers;
      std::move(part.images.begin() + first, part.images.begin() + image,
                std::back_inserter(scan.images));
    }
    for (auto& problem : part.problems) {
      if (problem.offset >= covered_by_earlier_chunks) scan.problems.push_back(std::move(problem));
    }
  }
}

void scan_regions(const ByteReader& bytes, const std::vector<Region>& plan,
                  const ScanOptions& options, FileScan& scan) {
  if (options.threads <= 1) {
    // One thread: every section is one chunk, so there is nothing to merge.
    // Scanning all of them into one list spares a copy of tens of thousands
    // of images (a fifth of the time for libcufft's 23,984).
    RegionScan all;
    for (const Region& r : plan)
      scan_region(bytes, r.begin, r.end, r.layout, r.source, all, r.start_limit);
    scan.containers += all.containers.size();
    if (scan.images.empty()) {
      scan.images = std::move(all.images);
    } else {
      std::move(all.images.begin(), all.images.end(), std::back_inserter(scan.images));
    }
    std::move(all.problems.begin(), all.problems.end(), std::back_inserter(scan.problems));
    return;
  }
  std::vector<RegionScan> parts(plan.size());
  parallel_for(plan.size(), options.threads, [&](size_t i) {
    const Region& r = plan[i];
    scan_region(bytes, r.begin, r.end, r.layout, r.source, parts[i], r.start_limit);
  });
  merge_regions(plan, parts, scan);
}

// Any host binary, whatever its format: its sections searched as their
// roles say (host_binary.hpp).
void scan_host_binary(const ByteReader& bytes, const HostBinary& binary, const ScanOptions& options,
                      FileScan& scan) {
  const unsigned threads = options.threads;
  scan.problems.insert(scan.problems.end(), binary.problems.begin(), binary.problems.end());
  scan.machine = binary.machine;
  scan.linkage = binary.linkage;
  std::vector<Region> plan;
  if (!binary.has_sections) {
    // No section table (stripped with sstrip, say): search the whole file.
    add_region(plan, 0, bytes.size(), RegionLayout::embedded, {"(no section table)"}, threads);
  }
  for (const HostSection& section : binary.sections) {
    const uint64_t end = section.offset + section.size;
    switch (section.role) {
      case DeviceCodeRole::fatbins:
        add_region(plan, section.offset, end, RegionLayout::packed, {section.name}, threads);
        break;
      case DeviceCodeRole::relocatable_fatbins:
        add_region(plan, section.offset, end, RegionLayout::packed,
                   {section.name, /*relocatable=*/true}, threads);
        break;
      case DeviceCodeRole::data:
        add_region(plan, section.offset, end, RegionLayout::embedded, {section.name}, threads);
        break;
      case DeviceCodeRole::none:
        break;
    }
  }
  scan_regions(bytes, plan, options, scan);
}

void scan_cubin(const ByteReader& bytes, FileScan& scan) {
  const CubinInfo cubin = read_cubin(bytes);
  Image image;
  image.kind = ImageKind::sass;
  image.kind_code = fatbin::kKindElf;
  image.sm = cubin.sm;
  image.variant = cubin.variant.value_or(Variant::plain);
  image.elf_abi = elf_abi_from_abi_version(cubin.abi_version);
  image.entry_version = {1, cubin.abi_version};
  image.size = bytes.size();
  image.relocatable = cubin.elf_type == elf::kTypeRelocatable;
  image.debug = cubin.debug;  // no entry flags here: the cubin's own sections say it
  image.section = "(file)";
  image.payload = std::make_shared<PayloadInfo>();
  image.payload->cubin_elf_type = cubin.elf_type;
  image.payload->cubin_abi_version = cubin.abi_version;
  image.payload->cubin_sm = cubin.sm;
  image.payload->cubin_e_flags = cubin.e_flags;
  image.payload->cubin_variant = cubin.variant;
  image.payload->toolkit = cubin.toolkit;
  image.payload->producer_options = cubin.producer_options;
  scan.images.push_back(std::move(image));
}

bool scan_ptx(const ByteReader& bytes, FileScan& scan) {
  const uint64_t head = std::min(bytes.size(), kPtxSniffBytes);
  const auto header = read_ptx_header({reinterpret_cast<const char*>(bytes.data()), head});
  if (!header) return false;
  Image image;
  image.kind = ImageKind::ptx;
  image.kind_code = fatbin::kKindPtx;
  image.sm = header->sm;
  image.variant = header->variant;
  image.ptx_isa = header->version;
  image.entry_version = header->version;
  image.size = bytes.size();
  image.section = "(file)";
  image.payload = std::make_shared<PayloadInfo>();
  image.payload->ptx_version = header->version;
  image.payload->ptx_target = header->target;
  scan.images.push_back(std::move(image));
  return true;
}

}  // namespace

FileScan scan_bytes(std::span<const std::byte> span, std::string path, const ScanOptions& options) {
  const ByteReader bytes(span);
  FileScan scan;
  scan.path = std::move(path);
  scan.file_size = bytes.size();
  try {
    switch (classify_elf(bytes)) {
      case ElfClass::elf64_le: {
        const bool is_cubin =
            bytes.contains(18, 2) && bytes.u16(18, "e_machine") == elf::kMachineCuda;
        scan.format = is_cubin ? FileFormat::cubin : FileFormat::elf;
        if (is_cubin) {
          scan_cubin(bytes, scan);
        } else {
          scan_host_binary(bytes, read_elf_host_binary(bytes), options, scan);
        }
        break;
      }
      case ElfClass::other_elf:
        scan.format = FileFormat::other;  // 32-bit or big-endian: no CUDA toolkit targets these
        break;
      case ElfClass::not_elf:
        if (bytes.contains(0, 4) && bytes.u32(0, "magic") == fatbin::kContainerMagic) {
          scan.format = FileFormat::fatbin;
          scan_regions(bytes, {{0, bytes.size(), bytes.size(), RegionLayout::packed, {"(fatbin)"}}},
                       options, scan);
          break;
        }
        switch (classify_pe(bytes)) {
          case PeClass::pe32_plus:
            scan.format = FileFormat::pe;
            scan_host_binary(bytes, read_pe_host_binary(bytes), options, scan);
            break;
          case PeClass::pe32:      // 32-bit Windows: no CUDA toolkit targets it
          case PeClass::dos_only:  // "MZ" and no PE header: a DOS program
            scan.format = FileFormat::other;
            break;
          case PeClass::not_pe:
            if (scan_ptx(bytes, scan)) scan.format = FileFormat::ptx;
            break;
        }
        break;
    }
  } catch (const ScanError& error) {
    scan.problems.push_back({error.offset(), error.what()});
  }
  if (options.deep) {
    parallel_for(scan.images.size(), options.threads, [&](size_t i) {
      if (scan.images[i].section != "(file)") inspect_payload(bytes, scan.images[i]);
    });
  }
  return scan;
}

}  // namespace archfit::binary
