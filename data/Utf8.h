// UTF-8 checks for text that goes into JSON (dataset metadata, --jsonl, reports): input files are bytes, and
// one stray byte (Latin-1, a binary file) must reject that one molecule, not abort a whole build.
//
//   size_t at;
//   if (!isValidUtf8(smiles, &at)) reject("byte " + std::to_string(at) + " is not UTF-8");
//   nlohmann::json(escapeInvalidUtf8(smiles));     // "C1\\xffCC": never throws
#pragma once
#include <string>
#include <string_view>

namespace gnn {

/// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates, at most U+10FFFF); `badAt` receives the
/// offset of the first byte that is not.
bool isValidUtf8(std::string_view s, size_t* badAt = nullptr);
/// `s` with every byte that is not part of well-formed UTF-8 written as the text \xHH.
std::string escapeInvalidUtf8(std::string_view s);

}  // namespace gnn
