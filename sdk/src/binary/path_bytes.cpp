#include "path_bytes.hpp"

#include <boost/archive/iterators/base64_from_binary.hpp>
#include <boost/archive/iterators/transform_width.hpp>
#include <string>

#include "util/utf8.hpp"

namespace archfit::binary {

namespace {

std::string base64(std::string_view bytes) {
  using namespace boost::archive::iterators;
  using Encoder = base64_from_binary<transform_width<std::string_view::const_iterator, 6, 8>>;
  std::string out(Encoder(bytes.begin()), Encoder(bytes.end()));
  out.append((3 - bytes.size() % 3) % 3, '=');  // the iterators leave the padding out
  return out;
}

}  // namespace

void put_path(nlohmann::json& object, std::string_view path) {
  object["path"] = std::string(path);  // dumped with error_handler_t::replace
  if (!util::is_valid_utf8(path)) object["path_bytes"] = base64(path);
}

}  // namespace archfit::binary
