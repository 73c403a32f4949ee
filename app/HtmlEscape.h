// HtmlEscape: text from the data (SMILES, file names, target names, flag values) made safe to place in HTML
// and SVG, in element content and in quoted attribute values alike.
//
//   out << "<td>" << app::htmlEscape(smiles) << "</td>";      // "C<O" -> "C&lt;O"
#pragma once
#include <string>

namespace gnn::app {

/// `text` with &, <, >, " and ' replaced by their character references; bytes below 0x20 other than tab and
/// newline (which HTML does not allow as text) become U+FFFD; the rest, UTF-8 included, is kept as it is.
std::string htmlEscape(const std::string& text);

}  // namespace gnn::app
