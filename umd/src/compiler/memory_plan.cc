// memory_plan: being written (see docs/compiler.md).
#include "sable/umd/compiler/layer.h"

namespace sable::umd::compiler {}  // namespace sable::umd::compiler
