// Device selectors: CEL's tokens (github.com/google/cel-go/parser/gen/CEL.g4), for device_cel_parse.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuadmit::policy::cel {

enum class Tok : std::uint8_t { kEnd, kIdent, kInt, kUint, kDouble, kString, kPunct };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;             // identifier, punctuation, or the decoded string
  std::uint64_t magnitude = 0;  // kInt (before any minus) and kUint
  double real = 0;
  std::size_t offset = 0;
};

// The tokens of `text`, ending with kEnd; throws CompileStop on a syntax error or an unsupported literal.
std::vector<Token> lex(std::string_view text);

// Throw CompileStop: a Kubernetes syntax error at `offset` ("compilation failed: ERROR: <input>:L:C: Syntax
// error: ..."), or a construct outside the subset ("not evaluated: ...").
[[noreturn]] void syntax_error(std::string_view text, std::size_t offset, const std::string& what);
[[noreturn]] void unsupported(const std::string& what);

}  // namespace gpuadmit::policy::cel
