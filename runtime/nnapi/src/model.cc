// ANeuralNetworksModel_*: building a model operand by operand and operation by operation, then
// finishing it into the HAL model every device takes (operations sorted into run order,
// referenced models flattened in, large values copied into shared memory, validated).
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

#include "objects.h"
#include "sable/hal/extensions.h"
#include "sable/hal/validation.h"

using sable::hal::OperandLifeTime;
using sable::hal::OperandType;
using sable::hal::OperationType;

namespace sable::nnapi {
namespace {

// The C enums must keep NNAPI's values, which the HAL's enums carry too.
#define SABLE_CHECK_OPERAND(name) \
  static_assert(ANEURALNETWORKS_##name == static_cast<int>(OperandType::name), #name);
SABLE_CHECK_OPERAND(FLOAT32)
SABLE_CHECK_OPERAND(INT32)
SABLE_CHECK_OPERAND(UINT32)
SABLE_CHECK_OPERAND(TENSOR_FLOAT32)
SABLE_CHECK_OPERAND(TENSOR_INT32)
SABLE_CHECK_OPERAND(TENSOR_QUANT8_ASYMM)
SABLE_CHECK_OPERAND(BOOL)
SABLE_CHECK_OPERAND(TENSOR_QUANT16_SYMM)
SABLE_CHECK_OPERAND(TENSOR_FLOAT16)
SABLE_CHECK_OPERAND(TENSOR_BOOL8)
SABLE_CHECK_OPERAND(FLOAT16)
SABLE_CHECK_OPERAND(TENSOR_QUANT8_SYMM_PER_CHANNEL)
SABLE_CHECK_OPERAND(TENSOR_QUANT16_ASYMM)
SABLE_CHECK_OPERAND(TENSOR_QUANT8_SYMM)
SABLE_CHECK_OPERAND(TENSOR_QUANT8_ASYMM_SIGNED)
#undef SABLE_CHECK_OPERAND
static_assert(ANEURALNETWORKS_MODEL == static_cast<int>(OperandType::SUBGRAPH));

// Every operation code of the HAL against the C enum, generated from the HAL's own list so that
// none is forgotten. OEM_OPERATION belongs to NeuralNetworksOEM.h, which Sable does not provide.
constexpr int ANEURALNETWORKS_OEM_OPERATION = 10000;
#define SABLE_CHECK_OPERATION(name, code) \
  static_assert(ANEURALNETWORKS_##name == code && code == static_cast<int>(OperationType::name), #name);
SABLE_OPERATION_TYPES(SABLE_CHECK_OPERATION)
#undef SABLE_CHECK_OPERATION

static_assert(ANEURALNETWORKS_BYTE_SIZE_OF_CACHE_TOKEN == hal::kByteSizeOfCacheToken);

// A model call on a finished model, or on one whose finish failed, is BAD_STATE (as AOSP's
// ModelBuilder::badState). Any other failing call changes nothing: the model stays usable.
int checkModifiable(ANeuralNetworksModel* model, const char* function) {
  if (model == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, std::string(function) + ": model is null");
  if (model->finished) {
    return fail(ANEURALNETWORKS_BAD_STATE, std::string(function) + ": the model is already finished");
  }
  if (model->invalid) {
    return fail(ANEURALNETWORKS_BAD_STATE, std::string(function) + ": the model failed to finish");
  }
  return ANEURALNETWORKS_NO_ERROR;
}

bool validOperandIndex(const ANeuralNetworksModel* model, int32_t index) {
  return index >= 0 && static_cast<size_t>(index) < model->operands.size();
}

// Sorts the operations so that each reads only what model inputs, constants or earlier operations
// provide (the HAL's order), stably: among the ready operations the application's first goes first.
// Returns false when some operation can never run (a cycle, or an operand nothing writes).
bool sortIntoRunOrder(const std::vector<hal::Operand>& operands, const std::vector<hal::Operation>& operations,
                      std::vector<uint32_t>* order) {
  std::vector<int> writer(operands.size(), -1);
  for (size_t i = 0; i < operations.size(); ++i) {
    for (uint32_t out : operations[i].outputs) writer[out] = static_cast<int>(i);
  }
  std::vector<bool> done(operations.size(), false);
  std::vector<bool> available(operands.size(), false);
  for (size_t k = 0; k < operands.size(); ++k) available[k] = writer[k] < 0;
  order->clear();
  while (order->size() < operations.size()) {
    bool progressed = false;
    for (size_t i = 0; i < operations.size(); ++i) {
      if (done[i]) continue;
      const bool ready = std::all_of(operations[i].inputs.begin(), operations[i].inputs.end(),
                                     [&](uint32_t in) { return available[in]; });
      if (!ready) continue;
      done[i] = true;
      progressed = true;
      order->push_back(static_cast<uint32_t>(i));
      for (uint32_t out : operations[i].outputs) available[out] = true;
      break;  // restart from the first: the application's order wins among ready operations
    }
    if (!progressed) return false;
  }
  return true;
}

void countConsumers(hal::Subgraph& subgraph) {
  for (auto& operand : subgraph.operands) operand.numberOfConsumers = 0;
  for (const auto& operation : subgraph.operations) {
    for (uint32_t in : operation.inputs) ++subgraph.operands[in].numberOfConsumers;
  }
}

// Appends a finished model's HAL model to `out` as referenced subgraphs: its main subgraph at the
// returned index, then its own referenced ones, with its constants and pools moved along.
uint32_t appendReferenced(hal::Model& out, const hal::Model& value) {
  const uint32_t base = static_cast<uint32_t>(out.referenced.size());
  const uint32_t valueOffset = static_cast<uint32_t>(out.operandValues.size());
  const uint32_t poolOffset = static_cast<uint32_t>(out.pools.size());
  auto relocate = [&](hal::Subgraph subgraph) {
    for (auto& operand : subgraph.operands) {
      switch (operand.lifetime) {
        case OperandLifeTime::CONSTANT_COPY: operand.location.offset += valueOffset; break;
        case OperandLifeTime::CONSTANT_REFERENCE: operand.location.poolIndex += poolOffset; break;
        case OperandLifeTime::SUBGRAPH: operand.location.offset += base + 1; break;
        default: break;
      }
    }
    return subgraph;
  };
  out.referenced.push_back(relocate(value.main));
  for (const auto& subgraph : value.referenced) out.referenced.push_back(relocate(subgraph));
  out.operandValues.insert(out.operandValues.end(), value.operandValues.begin(), value.operandValues.end());
  out.pools.insert(out.pools.end(), value.pools.begin(), value.pools.end());
  return base;
}

// The prefix of an extension's name: the same for the name throughout the process, as in AOSP's
// runtime (1, 2, ... in the order the names are first asked for), so that a type code obtained for
// one model means the same in another.
hal::Result<uint16_t> extensionPrefix(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, uint16_t> prefixes;
  std::lock_guard lock(mutex);
  if (auto it = prefixes.find(name); it != prefixes.end()) return it->second;
  if (prefixes.size() >= hal::kMaxExtensionPrefix) {
    return hal::invalidArgument("no extension prefix left for {} ({} in use)", name, prefixes.size());
  }
  const auto prefix = static_cast<uint16_t>(prefixes.size() + 1);
  prefixes.emplace(name, prefix);
  return prefix;
}

// getExtensionOperandType and getExtensionOperationType: their common checks (the model modifiable,
// no null `name` or `out`), then the extension's prefix for `model`, which then maps it in its
// extensionNameToPrefix; BAD_DATA when no device supports the extension.
int obtainExtensionPrefix(ANeuralNetworksModel* model, const char* function, const char* name, const void* out,
                          hal::Extension* extension, uint16_t* prefix) {
  if (int code = checkModifiable(model, function); code != ANEURALNETWORKS_NO_ERROR) return code;
  if (name == nullptr || out == nullptr) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, fmt::format("{}: null argument", function));
  }
  if (!hal::isValidExtensionName(name)) {
    return fail(ANEURALNETWORKS_BAD_DATA,
                fmt::format("{}: '{}' is not an extension name (lowercase letters, digits, '.' and '_', "
                            "at least one '.')", function, name));
  }
  auto found = extensionOfDevices(name);
  if (!found) return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("{}: no device supports the extension {}", function, name));
  auto assigned = extensionPrefix(name);
  if (!assigned.ok()) return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("{}: {}", function, assigned.error().message));
  const bool known = std::any_of(model->extensions.begin(), model->extensions.end(),
                                 [&](const auto& e) { return e.name == name; });
  if (!known) model->extensions.push_back({name, *assigned});
  *extension = std::move(*found);
  *prefix = *assigned;
  return ANEURALNETWORKS_NO_ERROR;
}

hal::Result<void> finishModel(ANeuralNetworksModel* model) {
  auto out = std::make_shared<hal::Model>();
  out->relaxComputationFloat32toFloat16 = model->relaxed;
  out->operandValues = model->operandValues;
  out->pools = model->pools;
  hal::Subgraph& main = out->main;
  main.operands = model->operands;
  main.inputIndexes = model->inputs;
  main.outputIndexes = model->outputs;
  out->extensionNameToPrefix = model->extensions;

  // Values larger than 128 bytes are read from the application's buffers now, into one pool.
  if (!model->largeValues.empty()) {
    size_t total = 0;
    for (const auto& large : model->largeValues) total += (large.length + 15) / 16 * 16;
    if (total > UINT32_MAX) return hal::invalidArgument("the model's constant values exceed 4 GiB");
    SABLE_ASSIGN_OR_RETURN(auto pool, hal::SharedMemory::create(total, "nnapi-constants"));
    const uint32_t poolIndex = static_cast<uint32_t>(out->pools.size());
    uint32_t offset = 0;
    for (const auto& large : model->largeValues) {
      std::memcpy(pool->data() + offset, large.buffer, large.length);
      main.operands[large.operand].location = {poolIndex, offset, static_cast<uint32_t>(large.length)};
      offset += static_cast<uint32_t>((large.length + 15) / 16 * 16);
    }
    out->pools.push_back(std::move(pool));
  }

  // Referenced models, once each however often they are referenced.
  std::map<const ANeuralNetworksModel*, uint32_t> placed;
  for (const auto& [operand, value] : model->referencedModels) {
    auto [it, fresh] = placed.try_emplace(value, 0);
    if (fresh) it->second = appendReferenced(*out, *value->hal);
    main.operands[operand].location = {0, it->second, 0};
  }

  std::vector<uint32_t> order;
  if (!sortIntoRunOrder(main.operands, model->operations, &order)) {
    return hal::invalidArgument("the operations cannot be ordered: a cycle, or an operation reads an operand "
                                "that no operation writes and that is not a model input or constant");
  }
  for (uint32_t i : order) main.operations.push_back(model->operations[i]);
  countConsumers(main);
  SABLE_TRY(hal::validateModel(*out));
  model->applicationOperationIndex = std::move(order);
  model->hal = std::move(out);
  return {};
}

}  // namespace
}  // namespace sable::nnapi

using namespace sable;
using namespace sable::nnapi;

extern "C" {

int ANeuralNetworksModel_create(ANeuralNetworksModel** model) {
  if (model == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "ANeuralNetworksModel_create: model is null");
  *model = new (std::nothrow) ANeuralNetworksModel();
  return *model != nullptr ? ANEURALNETWORKS_NO_ERROR : ANEURALNETWORKS_OUT_OF_MEMORY;
}

void ANeuralNetworksModel_free(ANeuralNetworksModel* model) { delete model; }

int ANeuralNetworksModel_addOperand(ANeuralNetworksModel* model, const ANeuralNetworksOperandType* type) {
  if (int code = checkModifiable(model, "addOperand"); code != ANEURALNETWORKS_NO_ERROR) return code;
  if (type == nullptr) return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "addOperand: type is null");
  if (type->dimensionCount > 0 && type->dimensions == nullptr) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "addOperand: dimensions is null");
  }
  // OEM types are not part of the NDK's feature level 4 interface.
  if (hal::isExtensionCode(type->type)) {
    return fail(ANEURALNETWORKS_BAD_DATA,
                fmt::format("addOperand: operand type {:#x} is an extension's; the devices' extensions declare "
                            "no operand types (their operations take NNAPI's)", type->type));
  }
  if (!hal::isKnownOperandType(type->type) || type->type > ANEURALNETWORKS_MODEL) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("addOperand: unknown operand type {}", type->type));
  }
  if (model->operands.size() >= UINT32_MAX) {
    return fail(ANEURALNETWORKS_BAD_DATA, "addOperand: too many operands");
  }
  hal::Operand operand;
  operand.type = static_cast<OperandType>(type->type);
  operand.dimensions.assign(type->dimensions, type->dimensions + type->dimensionCount);
  operand.scale = type->scale;
  operand.zeroPoint = type->zeroPoint;
  // The HAL's per-operand rules (rank of scalars, scale and zero point for the type, sizes), on
  // the operand alone. A MODEL operand is checked once it references a model (at finish).
  if (operand.type == OperandType::SUBGRAPH) {
    if (!operand.dimensions.empty() || operand.scale != 0.0f || operand.zeroPoint != 0) {
      return fail(ANEURALNETWORKS_BAD_DATA, "addOperand: a MODEL operand has no dimensions, scale or zero point");
    }
  } else {
    hal::Model alone;
    alone.main.operands.push_back(operand);
    // Per-channel scales come later (setOperandSymmPerChannelQuantParams) and are checked at
    // finish; stand-ins let the rest of the operand be checked now.
    if (operand.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL && !operand.dimensions.empty()) {
      alone.main.operands[0].extraParams =
          hal::SymmPerChannelQuantParams{std::vector<float>(std::max(operand.dimensions[0], 1u), 1.0f), 0};
    }
    if (auto valid = hal::validateOperand(alone, alone.main, 0); !valid.ok()) {
      return fail(ANEURALNETWORKS_BAD_DATA, "addOperand: " + valid.error().message);
    }
  }
  model->operands.push_back(std::move(operand));
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_setOperandValue(ANeuralNetworksModel* model, int32_t index, const void* buffer,
                                         size_t length) {
  if (int code = checkModifiable(model, "setOperandValue"); code != ANEURALNETWORKS_NO_ERROR) return code;
  if (buffer == nullptr && length != 0) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "setOperandValue: buffer is null");
  }
  if (!validOperandIndex(model, index)) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("setOperandValue: no operand {}", index));
  }
  hal::Operand& operand = model->operands[static_cast<size_t>(index)];
  if (operand.lifetime != OperandLifeTime::TEMPORARY_VARIABLE) {
    return fail(ANEURALNETWORKS_BAD_DATA,
                      fmt::format("setOperandValue: operand {} already has a value or a role ({})", index,
                                  hal::toString(operand.lifetime)));
  }
  if (buffer == nullptr) {  // an omitted optional operand
    operand.lifetime = OperandLifeTime::NO_VALUE;
    return ANEURALNETWORKS_NO_ERROR;
  }
  if (operand.type == OperandType::SUBGRAPH) {
    return fail(ANEURALNETWORKS_BAD_DATA,
                      "setOperandValue: a MODEL operand takes its value from setOperandValueFromModel");
  }
  const auto needed = hal::sizeOfData(operand.type, operand.dimensions);
  if (hal::hasUnknownDimensions(operand.type, operand.dimensions) || !needed || *needed != length) {
    return fail(ANEURALNETWORKS_BAD_DATA,
                      fmt::format("setOperandValue: operand {} needs {} bytes (fully specified), got {}", index,
                                  needed ? *needed : 0, length));
  }
  if (length <= ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES) {
    // Copied now; aligned so that any element type can be read in place.
    const size_t offset = (model->operandValues.size() + 7) / 8 * 8;
    if (offset + length > UINT32_MAX) {
      return fail(ANEURALNETWORKS_BAD_DATA, "setOperandValue: the model's copied values exceed 4 GiB");
    }
    model->operandValues.resize(offset + length);
    std::memcpy(model->operandValues.data() + offset, buffer, length);
    operand.lifetime = OperandLifeTime::CONSTANT_COPY;
    operand.location = {0, static_cast<uint32_t>(offset), static_cast<uint32_t>(length)};
  } else {
    // NNAPI's reference semantics: the buffer must stay valid, unchanged, until finish reads it.
    operand.lifetime = OperandLifeTime::CONSTANT_REFERENCE;
    model->largeValues.push_back({static_cast<uint32_t>(index), buffer, length});
  }
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_setOperandSymmPerChannelQuantParams(
    ANeuralNetworksModel* model, int32_t index, const ANeuralNetworksSymmPerChannelQuantParams* channelQuant) {
  if (int code = checkModifiable(model, "setOperandSymmPerChannelQuantParams"); code != ANEURALNETWORKS_NO_ERROR) {
    return code;
  }
  if (channelQuant == nullptr || (channelQuant->scaleCount > 0 && channelQuant->scales == nullptr)) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "setOperandSymmPerChannelQuantParams: null parameters");
  }
  if (!validOperandIndex(model, index)) {
    return fail(ANEURALNETWORKS_BAD_DATA,
                      fmt::format("setOperandSymmPerChannelQuantParams: no operand {}", index));
  }
  hal::Operand& operand = model->operands[static_cast<size_t>(index)];
  if (operand.type != OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL) {
    return fail(ANEURALNETWORKS_BAD_DATA,
                      fmt::format("setOperandSymmPerChannelQuantParams: operand {} is {}, not "
                                  "TENSOR_QUANT8_SYMM_PER_CHANNEL",
                                  index, hal::toString(operand.type)));
  }
  if (channelQuant->channelDim >= operand.dimensions.size() ||
      (operand.dimensions[channelQuant->channelDim] != 0 &&
       operand.dimensions[channelQuant->channelDim] != channelQuant->scaleCount)) {
    return fail(ANEURALNETWORKS_BAD_DATA,
                      fmt::format("setOperandSymmPerChannelQuantParams: channelDim {} with {} scales does not fit "
                                  "operand {} of rank {}",
                                  channelQuant->channelDim, channelQuant->scaleCount, index, operand.dimensions.size()));
  }
  for (uint32_t i = 0; i < channelQuant->scaleCount; ++i) {
    if (!(channelQuant->scales[i] > 0.0f)) {
      return fail(ANEURALNETWORKS_BAD_DATA,
                        fmt::format("setOperandSymmPerChannelQuantParams: scale {} is not positive", i));
    }
  }
  operand.extraParams = hal::SymmPerChannelQuantParams{
      std::vector<float>(channelQuant->scales, channelQuant->scales + channelQuant->scaleCount),
      channelQuant->channelDim};
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_setOperandValueFromMemory(ANeuralNetworksModel* model, int32_t index,
                                                   const ANeuralNetworksMemory* memory, size_t offset,
                                                   size_t length) {
  if (int code = checkModifiable(model, "setOperandValueFromMemory"); code != ANEURALNETWORKS_NO_ERROR) return code;
  if (memory == nullptr) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "setOperandValueFromMemory: memory is null");
  }
  if (!validOperandIndex(model, index)) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("setOperandValueFromMemory: no operand {}", index));
  }
  if (memory->fromDesc) {
    return fail(ANEURALNETWORKS_BAD_DATA,
                      "setOperandValueFromMemory: a memory from ANeuralNetworksMemoryDesc cannot hold constants");
  }
  hal::Operand& operand = model->operands[static_cast<size_t>(index)];
  if (operand.lifetime != OperandLifeTime::TEMPORARY_VARIABLE || operand.type == OperandType::SUBGRAPH) {
    return fail(ANEURALNETWORKS_BAD_DATA,
                      fmt::format("setOperandValueFromMemory: operand {} cannot take a value", index));
  }
  const auto needed = hal::sizeOfData(operand.type, operand.dimensions);
  if (hal::hasUnknownDimensions(operand.type, operand.dimensions) || !needed || *needed != length) {
    return fail(ANEURALNETWORKS_BAD_DATA,
                      fmt::format("setOperandValueFromMemory: operand {} needs {} bytes, got {}", index,
                                  needed ? *needed : 0, length));
  }
  if (offset > memory->size || length > memory->size - offset || memory->offset + offset > UINT32_MAX) {
    return fail(ANEURALNETWORKS_BAD_DATA,
                      fmt::format("setOperandValueFromMemory: [{}, +{}) is outside the memory's {} bytes", offset,
                                  length, memory->size));
  }
  // One pool per memory, however many operands it holds.
  uint32_t poolIndex = 0;
  auto it = std::find(model->pools.begin(), model->pools.end(), memory->shared);
  if (it == model->pools.end()) {
    poolIndex = static_cast<uint32_t>(model->pools.size());
    model->pools.push_back(memory->shared);
  } else {
    poolIndex = static_cast<uint32_t>(it - model->pools.begin());
  }
  operand.lifetime = OperandLifeTime::CONSTANT_REFERENCE;
  operand.location = {poolIndex, static_cast<uint32_t>(memory->offset + offset), static_cast<uint32_t>(length)};
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_setOperandValueFromModel(ANeuralNetworksModel* model, int32_t index,
                                                  const ANeuralNetworksModel* value) {
  if (int code = checkModifiable(model, "setOperandValueFromModel"); code != ANEURALNETWORKS_NO_ERROR) return code;
  if (value == nullptr) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "setOperandValueFromModel: value is null");
  }
  if (!value->finished) {
    return fail(ANEURALNETWORKS_BAD_STATE, "setOperandValueFromModel: the referenced model is not finished");
  }
  if (!validOperandIndex(model, index)) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("setOperandValueFromModel: no operand {}", index));
  }
  hal::Operand& operand = model->operands[static_cast<size_t>(index)];
  if (operand.type != OperandType::SUBGRAPH || operand.lifetime != OperandLifeTime::TEMPORARY_VARIABLE) {
    return fail(ANEURALNETWORKS_BAD_DATA,
                      fmt::format("setOperandValueFromModel: operand {} is not an unset MODEL operand", index));
  }
  operand.lifetime = OperandLifeTime::SUBGRAPH;
  model->referencedModels.emplace_back(static_cast<uint32_t>(index), value);
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_addOperation(ANeuralNetworksModel* model, ANeuralNetworksOperationType type,
                                      uint32_t inputCount, const uint32_t* inputs, uint32_t outputCount,
                                      const uint32_t* outputs) {
  if (int code = checkModifiable(model, "addOperation"); code != ANEURALNETWORKS_NO_ERROR) return code;
  if ((inputCount > 0 && inputs == nullptr) || (outputCount > 0 && outputs == nullptr)) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "addOperation: inputs or outputs is null");
  }
  if (hal::isExtensionCode(type)) {
    // Which operation of the extension, and its signature, are checked at finish (validateModel
    // with the model's extensionNameToPrefix).
    const uint16_t prefix = hal::extensionPrefixOf(type);
    if (std::none_of(model->extensions.begin(), model->extensions.end(),
                     [&](const auto& e) { return e.prefix == prefix; })) {
      return fail(ANEURALNETWORKS_BAD_DATA,
                  fmt::format("addOperation: operation type {:#x} is an extension's, but its prefix {} was not "
                              "obtained for this model (ANeuralNetworksModel_getExtensionOperationType)",
                              type, prefix));
    }
  } else if (!hal::isKnownOperationType(type) || type == static_cast<int>(OperationType::OEM_OPERATION)) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("addOperation: unknown operation type {}", type));
  }
  hal::Operation operation;
  operation.type = static_cast<OperationType>(type);
  for (uint32_t i = 0; i < inputCount; ++i) {
    if (inputs[i] >= model->operands.size()) {
      return fail(ANEURALNETWORKS_BAD_DATA,
                        fmt::format("addOperation: input {} names operand {}, of {}", i, inputs[i], model->operands.size()));
    }
    operation.inputs.push_back(inputs[i]);
  }
  for (uint32_t i = 0; i < outputCount; ++i) {
    if (outputs[i] >= model->operands.size()) {
      return fail(ANEURALNETWORKS_BAD_DATA,
                        fmt::format("addOperation: output {} names operand {}, of {}", i, outputs[i],
                                    model->operands.size()));
    }
    operation.outputs.push_back(outputs[i]);
  }
  // An operand is written once: by one operation, never a constant or a model input.
  for (uint32_t out : operation.outputs) {
    const auto& operand = model->operands[out];
    bool written = false;
    for (const auto& other : model->operations) {
      written = written || std::find(other.outputs.begin(), other.outputs.end(), out) != other.outputs.end();
    }
    if (written || (operand.lifetime != OperandLifeTime::TEMPORARY_VARIABLE &&
                    operand.lifetime != OperandLifeTime::SUBGRAPH_OUTPUT)) {
      return fail(ANEURALNETWORKS_BAD_DATA,
                        fmt::format("addOperation: operand {} is already written or holds a value", out));
    }
  }
  model->operations.push_back(std::move(operation));
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_identifyInputsAndOutputs(ANeuralNetworksModel* model, uint32_t inputCount,
                                                  const uint32_t* inputs, uint32_t outputCount,
                                                  const uint32_t* outputs) {
  if (int code = checkModifiable(model, "identifyInputsAndOutputs"); code != ANEURALNETWORKS_NO_ERROR) return code;
  if ((inputCount > 0 && inputs == nullptr) || (outputCount > 0 && outputs == nullptr)) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "identifyInputsAndOutputs: inputs or outputs is null");
  }
  if (model->identified) {
    return fail(ANEURALNETWORKS_BAD_STATE, "identifyInputsAndOutputs: already called for this model");
  }
  // Everything is checked before anything is marked, so that a failing call changes nothing.
  std::vector<uint32_t> in(inputs, inputs + inputCount), out(outputs, outputs + outputCount);
  std::vector<bool> listed(model->operands.size(), false);
  for (const auto* list : {&in, &out}) {
    for (uint32_t index : *list) {
      if (index >= model->operands.size()) {
        return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("identifyInputsAndOutputs: no operand {}", index));
      }
      const hal::Operand& operand = model->operands[index];
      if (operand.lifetime != OperandLifeTime::TEMPORARY_VARIABLE || operand.type == OperandType::SUBGRAPH ||
          listed[index]) {
        return fail(ANEURALNETWORKS_BAD_DATA,
                    fmt::format("identifyInputsAndOutputs: operand {} is a constant, or listed twice", index));
      }
      listed[index] = true;
    }
  }
  for (uint32_t index : in) model->operands[index].lifetime = OperandLifeTime::SUBGRAPH_INPUT;
  for (uint32_t index : out) model->operands[index].lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
  model->inputs = std::move(in);
  model->outputs = std::move(out);
  model->identified = true;
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_relaxComputationFloat32toFloat16(ANeuralNetworksModel* model, bool allow) {
  if (int code = checkModifiable(model, "relaxComputationFloat32toFloat16"); code != ANEURALNETWORKS_NO_ERROR) {
    return code;
  }
  model->relaxed = allow;
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_getExtensionOperandType(ANeuralNetworksModel* model, const char* extensionName,
                                                 uint16_t operandCodeWithinExtension, int32_t* type) {
  hal::Extension extension;
  uint16_t prefix = 0;
  if (int code = obtainExtensionPrefix(model, "getExtensionOperandType", extensionName, type, &extension, &prefix);
      code != ANEURALNETWORKS_NO_ERROR) {
    return code;
  }
  if (std::none_of(extension.operandTypes.begin(), extension.operandTypes.end(),
                   [&](const auto& info) { return info.type == operandCodeWithinExtension; })) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("getExtensionOperandType: {} declares no operand type {}",
                                                      extensionName, operandCodeWithinExtension));
  }
  *type = hal::extensionCode(prefix, operandCodeWithinExtension);
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_getExtensionOperationType(ANeuralNetworksModel* model, const char* extensionName,
                                                   uint16_t operationCodeWithinExtension,
                                                   ANeuralNetworksOperationType* type) {
  hal::Extension extension;
  uint16_t prefix = 0;
  if (int code = obtainExtensionPrefix(model, "getExtensionOperationType", extensionName, type, &extension, &prefix);
      code != ANEURALNETWORKS_NO_ERROR) {
    return code;
  }
  *type = hal::extensionCode(prefix, operationCodeWithinExtension);
  return ANEURALNETWORKS_NO_ERROR;
}

int ANeuralNetworksModel_setOperandExtensionData(ANeuralNetworksModel* model, int32_t index, const void* data,
                                                 size_t length) {
  if (int code = checkModifiable(model, "setOperandExtensionData"); code != ANEURALNETWORKS_NO_ERROR) return code;
  if (data == nullptr && length != 0) {
    return fail(ANEURALNETWORKS_UNEXPECTED_NULL, "setOperandExtensionData: data is null");
  }
  if (index < 0 || static_cast<size_t>(index) >= model->operands.size()) {
    return fail(ANEURALNETWORKS_BAD_DATA, fmt::format("setOperandExtensionData: no operand {} (there are {})", index,
                                                      model->operands.size()));
  }
  // Only an operand of an extension operand type has extension data, and addOperand takes none:
  // no extension of these devices declares operand types.
  return fail(ANEURALNETWORKS_BAD_DATA,
              fmt::format("setOperandExtensionData: operand {} is of type {}, not an extension operand type", index,
                          hal::toString(model->operands[static_cast<size_t>(index)].type)));
}

int ANeuralNetworksModel_finish(ANeuralNetworksModel* model) {
  if (int code = checkModifiable(model, "finish"); code != ANEURALNETWORKS_NO_ERROR) return code;
  if (!model->identified) {
    return fail(ANEURALNETWORKS_BAD_DATA, "ANeuralNetworksModel_finish: identifyInputsAndOutputs was not called");
  }
  auto finished = finishModel(model);
  if (!finished.ok()) {
    model->invalid = true;
    return fail(ANEURALNETWORKS_BAD_DATA, "ANeuralNetworksModel_finish: " + finished.error().message);
  }
  model->finished = true;
  // The application's buffers of large values are no longer needed.
  model->largeValues.clear();
  return ANEURALNETWORKS_NO_ERROR;
}

}  // extern "C"
