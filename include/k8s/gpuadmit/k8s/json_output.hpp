// Compact JSON text from nlohmann::json, byte for byte what `value.dump()` prints, without its per-byte
// work: nlohmann decodes every byte of every string through a UTF-8 state machine, and a denial is mostly
// long message strings. Here plain ASCII is copied in runs and only multi-byte sequences are checked.
//
// Like dump(), invalid UTF-8 in a string throws nlohmann::json::type_error (316); floats and binary values
// are printed by nlohmann itself, so their formatting cannot drift.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpuadmit::k8s {

void append_json(std::string& out, const nlohmann::json& value);

// What a string literal does with bytes that are not UTF-8: throw as dump() does (responses), or write
// U+FFFD for each such byte (log lines, which must never throw on a name a user crafted).
enum class InvalidUtf8 { kThrow, kReplace };

// Appends `text` as a JSON string literal, quotes included.
void append_json_string(std::string& out, std::string_view text, InvalidUtf8 invalid = InvalidUtf8::kThrow);
std::string json_text(const nlohmann::json& value);

// Appends "/" and `token` escaped as RFC 6901 says (~ → ~0, / → ~1) to the JSON Pointer `path`.
void append_pointer_token(std::string& path, std::string_view token);

}  // namespace gpuadmit::k8s
