#include "file_contents.hpp"

#include <array>
#include <cerrno>
#include <fstream>
#include <system_error>

namespace gpuadmit::server {

Result<std::string> read_file(const std::filesystem::path& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot open " + path.string() + ": " + std::generic_category().message(errno));
  std::string content;
  std::array<char, 16384> chunk{};
  while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
    content.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (content.size() > max_bytes) {
      return make_error(path.string() + " is larger than " + std::to_string(max_bytes) + " bytes");
    }
  }
  if (in.bad()) return make_error("cannot read " + path.string());
  return content;
}

}  // namespace gpuadmit::server
