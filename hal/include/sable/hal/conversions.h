// Conversions between the HAL versions' types (versioned_types.h) and 1.3's, as NNAPI drivers
// do to serve every version with one implementation. Up-conversion always succeeds (every older
// structure is expressible in 1.3); whether the content is valid for the older version is
// validation's question (validateModelForVersion). Down-conversion fails with INVALID_ARGUMENT
// for what the older version cannot express (referenced subgraphs, per-channel parameters,
// driver-managed buffers); the tests use it to drive the older methods with 1.3 models.
#pragma once

#include "sable/hal/result.h"
#include "sable/hal/types.h"
#include "sable/hal/versioned_types.h"

namespace sable::hal {

Model convertToV1_3(const v1_0::Model& model);
Model convertToV1_3(const v1_1::Model& model);
Model convertToV1_3(const v1_2::Model& model);
Request convertToV1_3(const v1_0::Request& request);

// Whether a model is expressible at an older version, as AOSP's compliantWithV1_x: the version
// entry points of a client that speaks an older HAL (runtime::makeHalClientDevice) ask this before
// converting down, and slice the compliant operations out of a model that is not (the runtime's
// extractSubModel), as the framework's MetaModel does for an older driver.
// compliantWith: the whole valid model, operands and model-wide flags included.
bool compliantWith(HalVersion version, const Model& model);
// Per operation of the main subgraph of a valid model: whether its signature and every operand it
// reads or writes exist at `version` (a relaxed model needs 1.1 for all of them). Fails with the
// validation error for an invalid model.
Result<std::vector<bool>> compliantOperations(HalVersion version, const Model& model);

Result<v1_0::Model> convertToV1_0(const Model& model);
Result<v1_1::Model> convertToV1_1(const Model& model);
Result<v1_2::Model> convertToV1_2(const Model& model);
Result<v1_0::Request> convertToV1_0(const Request& request);

// Capabilities as each version reports them: 1.0's float32/quantized8 figures are 1.3's
// TENSOR_FLOAT32 and TENSOR_QUANT8_ASYMM entries, 1.1's relaxed figure is the tensor one, 1.2
// keeps the operand types that 1.2 defines.
v1_0::Capabilities convertToV1_0(const Capabilities& capabilities);
v1_1::Capabilities convertToV1_1(const Capabilities& capabilities);
v1_2::Capabilities convertToV1_2(const Capabilities& capabilities);
// And up, for a client of an older driver: the types an older version has no figure for are
// unlisted (lookupPerformance gives FLT_MAX), as are IF and WHILE.
Capabilities convertToV1_3(const v1_0::Capabilities& capabilities);
Capabilities convertToV1_3(const v1_1::Capabilities& capabilities);
Capabilities convertToV1_3(const v1_2::Capabilities& capabilities);
// The performance of `type` in `capabilities`, {FLT_MAX, FLT_MAX} when it is not listed.
PerformanceInfo lookupPerformance(const Capabilities& capabilities, OperandType type);

// The status a 1.0-1.2 method or callback reports for a 1.3 status: the 1.3-only values
// (MISSED_DEADLINE_*, RESOURCE_EXHAUSTED_*) become GENERAL_FAILURE, as AOSP's convertToV1_0 does.
ErrorStatus convertToV1_0(ErrorStatus status);

}  // namespace sable::hal
