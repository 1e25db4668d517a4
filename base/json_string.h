// appendJsonString: writes a JSON string literal that every JSON parser accepts, whatever
// bytes it is given. Kernel names, NVTX labels and query text reach our JSON from outside,
// so bytes that are not well-formed UTF-8 (RFC 3629: no overlongs, surrogates or code
// points past U+10FFFF) become U+FFFD instead of making the whole document unreadable.
#pragma once

#include <string>
#include <string_view>

namespace argus {

void appendJsonString(std::string* out, std::string_view s);

}  // namespace argus
