// The fuzz targets outside libFuzzer: runs LLVMFuzzerTestOneInput once on every file named on the command
// line, or found under a directory named there. make test builds each target with this main under
// ASan+UBSan and replays the seeds and every saved finding (tests/fixtures/fuzz), so a crash libFuzzer
// once found stays a test; `make fuzz` links the same targets with libFuzzer instead.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

namespace fs = std::filesystem;

void collect(const fs::path& path, std::vector<fs::path>& out) {
  if (fs::is_directory(path)) {
    for (const auto& entry : fs::recursive_directory_iterator(path)) {
      if (entry.is_regular_file() && entry.path().filename() != "README.md") out.push_back(entry.path());
    }
  } else {
    out.push_back(path);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i)
    collect(argv[i], files);  // NOLINT(cppcoreguidelines-pro-bounds-pointer-arithmetic)
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "replay: no inputs (a replay of nothing proves nothing)\n");
    return 1;
  }
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
      return 1;
    }
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast): libFuzzer's signature
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replay: %zu inputs, every property held\n", files.size());
  return 0;
}
