// The selection models compiled into the runtime library: the text of heuristics/models/<direction>.trees as
// the build found it (generators/embedded_models.py renders the definition into the build's generated
// directory). Empty for a direction without a model.
#pragma once

#include <string_view>

#include "tiledispatch/runtime/types.hpp"

namespace tiledispatch::selection {

std::string_view embedded_model(ConvDirection direction);

}  // namespace tiledispatch::selection
