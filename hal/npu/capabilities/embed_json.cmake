# Writes OUTPUT, a C++ source defining sable::hal::detail::embeddedNpuCapabilitiesJson(), the text
# of INPUT as a raw string literal. Run at build time by CMakeLists.txt (cmake -P).
file(READ "${INPUT}" content)
set(delimiter "sable_json")
string(FIND "${content}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw string delimiter )${delimiter}\"")
endif()
file(WRITE "${OUTPUT}.tmp"
"// Generated from ${INPUT} by embed_json.cmake. Do not edit.
#include <string_view>

namespace sable::hal::detail {

std::string_view embeddedNpuCapabilitiesJson() {
  return R\"${delimiter}(${content})${delimiter}\";
}

}  // namespace sable::hal::detail
")
# Only a changed text touches the output, so that an unchanged JSON recompiles nothing.
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
