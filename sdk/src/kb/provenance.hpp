#pragma once
// Where a knowledge-base entry came from: every entry names a source, and
// one that was inferred rather than read somewhere says from what.
#include <string>

namespace archfit::kb {

enum class Confidence { quoted, inferred };

// Where an entry came from. Every entry names a source; an inferred one also
// says what it was inferred from.
struct Provenance {
  std::string source;
  Confidence confidence = Confidence::quoted;
  std::string basis;  // only for inferred entries
  std::string file;   // the YAML file and line the entry was read from
  int line = 0;
};

}  // namespace archfit::kb
