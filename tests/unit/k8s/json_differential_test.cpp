// The JSON reader against nlohmann::json on mutated inputs: the same accept or reject and the same value,
// bar the stated differences (json_reader.cpp): a leading byte order mark and a NUL byte, which nlohmann
// skips or stops at and the reader rejects, and nesting past the reader's depth limit. Seeded, so a failure
// reproduces; CAPTURE prints the input.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "gpuadmit/k8s/json_input.hpp"

using gpuadmit::k8s::JsonLimits;
using gpuadmit::k8s::parse_json;
using nlohmann::json;

namespace {

// The non-fuzz JSON fixtures (the AdmissionReview bodies and API objects) and a few small documents with
// the numbers, escapes and structures mutations should reach.
std::vector<std::string> seeds() {
  std::vector<std::string> out{
      R"({"a":1,"b":-0,"c":1.5e3,"d":-2.25E-2,"e":18446744073709551615,"f":-9223372036854775808})",
      R"(["\u00e9\ud83d\ude00","\n\t\"\\\/",true,false,null,[],{}])",
      R"({"k":{"k":{"k":[1,[2,[3,{"x":"y"}]]]}},"k":2})",
      R"([1e308,4.9e-324,1e-320,123456789012345678901234567890,0.1,1E+2])",
  };
  for (const auto& entry : std::filesystem::recursive_directory_iterator(GPUADMIT_FIXTURES_DIR)) {
    if (entry.path().extension() != ".json") continue;
    if (entry.path().parent_path().parent_path().filename() == "fuzz") continue;
    if (entry.file_size() > 64 * 1024) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    out.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return out;
}

// One random edit: flip a byte, delete or duplicate a range, insert a token, or splice two seeds.
std::string mutate(const std::string& text, const std::string& other, std::mt19937& rng) {
  static const std::vector<std::string> kTokens{"\"",
                                                "\\",
                                                "\\u",
                                                "\\ud800",
                                                "\\udc00",
                                                "\\u0000",
                                                ",",
                                                ":",
                                                "[",
                                                "]",
                                                "{",
                                                "}",
                                                "-",
                                                "0",
                                                "1e",
                                                "e-400",
                                                "1e400",
                                                ".5",
                                                "00",
                                                "-0.0",
                                                "true",
                                                "nul",
                                                " ",
                                                "\t",
                                                "\r\n",
                                                "\xc3\xa9",
                                                "\xed\xa0\x80",
                                                "\xc0\xaf",
                                                "\xff",
                                                "/*",
                                                "//",
                                                "\x7f",
                                                "\x1f",
                                                "1.7976931348623157e308",
                                                "2.4703282292062327e-324"};
  if (text.empty()) return kTokens[rng() % kTokens.size()];
  std::string out = text;
  const auto at = [&](std::size_t size) { return static_cast<std::size_t>(rng() % (size + 1)); };
  switch (rng() % 5) {
    case 0:
      out[at(out.size() - 1)] = static_cast<char>(rng() % 256);
      break;
    case 1: {
      const std::size_t from = at(out.size() - 1);
      out.erase(from, 1 + rng() % 16);
      break;
    }
    case 2: {
      const std::size_t from = at(out.size() - 1);
      out.insert(at(out.size()), out.substr(from, 1 + rng() % 32));
      break;
    }
    case 3:
      out.insert(at(out.size()), kTokens[rng() % kTokens.size()]);
      break;
    default:
      out = out.substr(0, at(out.size())) + other.substr(at(other.size()));
      break;
  }
  return out;
}

bool stated_difference(const std::string& text) {
  return text.rfind("\xef\xbb\xbf", 0) == 0 || text.find('\0') != std::string::npos;
}

}  // namespace

TEST_CASE("the reader accepts and rejects mutated inputs as nlohmann does, with the same values",
          "[json][differential]") {
  const std::vector<std::string> corpus = seeds();
  REQUIRE(corpus.size() > 4);
  std::mt19937 rng(20261202);
  const JsonLimits limits{1 << 24, 1000};
  std::size_t accepted = 0;
  std::size_t rejected = 0;
  std::size_t stated = 0;
  for (int i = 0; i < 10000; ++i) {
    std::string text = corpus[rng() % corpus.size()];
    for (unsigned edits = rng() % 4 == 0 ? 2 : 1; edits > 0; --edits) {
      text = mutate(text, corpus[rng() % corpus.size()], rng);
    }
    const auto ours = parse_json(text, limits);
    const json theirs = json::parse(text, nullptr, false);
    if (stated_difference(text)) {
      ++stated;
      CHECK_FALSE(ours.ok());
      continue;
    }
    if (!ours.ok() && ours.error().message.find("nesting deeper than") != std::string::npos) {
      ++stated;  // nlohmann has no depth limit
      continue;
    }
    CAPTURE(i, text.substr(0, 2000));
    REQUIRE(ours.ok() == !theirs.is_discarded());
    if (!ours.ok()) {
      ++rejected;
      continue;
    }
    ++accepted;
    CHECK(*ours == theirs);
    CHECK(ours->dump() == theirs.dump());
  }
  // The mutations must reach both sides of the grammar, or the test proves little.
  CHECK(accepted > 1000);
  CHECK(rejected > 1000);
  CAPTURE(accepted, rejected, stated);
  SUCCEED();
}
