#include "burst_serialization.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace sable::hal::burst {
namespace {

// Datums are zero-filled before a field is set, so padding bytes that reach the shared ring
// (and the other process) never carry stale stack contents.
template <typename Datum>
Datum datum(typename Datum::Kind kind) {
  Datum d;
  std::memset(static_cast<void*>(&d), 0, sizeof(d));
  d.kind = kind;
  return d;
}

using RequestKind = FmqRequestDatum::Kind;
using ResultKind = FmqResultDatum::Kind;

// Element count of a packet, refusing what packetSize (uint32) cannot state.
class PacketSize {
 public:
  void add(uint64_t elements) { total_ += elements; }
  Result<uint32_t> get(const char* what) const {
    if (total_ > std::numeric_limits<uint32_t>::max()) {
      return invalidArgument("the {} packet would have {} elements, more than packetSize can state", what, total_);
    }
    return static_cast<uint32_t>(total_);
  }

 private:
  uint64_t total_ = 0;
};

void appendOperand(std::vector<FmqRequestDatum>& packet, const RequestArgument& argument, RequestKind infoKind,
                   RequestKind dimensionKind) {
  auto info = datum<FmqRequestDatum>(infoKind);
  FmqRequestDatum::OperandInformation operand{argument.hasNoValue ? uint8_t{1} : uint8_t{0}, argument.location,
                                              static_cast<uint32_t>(argument.dimensions.size())};
  if (infoKind == RequestKind::inputOperandInformation) {
    info.value.inputOperandInformation = operand;
  } else {
    info.value.outputOperandInformation = operand;
  }
  packet.push_back(info);
  for (uint32_t extent : argument.dimensions) {
    auto dimension = datum<FmqRequestDatum>(dimensionKind);
    if (dimensionKind == RequestKind::inputOperandDimensionValue) {
      dimension.value.inputOperandDimensionValue = extent;
    } else {
      dimension.value.outputOperandDimensionValue = extent;
    }
    packet.push_back(dimension);
  }
}

// Walks a packet front to back; every access is bounds-checked, so a count in the packet can
// never make the walk read past its end.
template <typename Datum>
class Cursor {
 public:
  explicit Cursor(std::span<const Datum> packet) : packet_(packet) {}

  Result<const Datum*> next(typename Datum::Kind kind, const char* what) {
    if (index_ >= packet_.size()) {
      return generalFailure("malformed burst packet: it ends at element {}, where {} was expected", index_, what);
    }
    const Datum& d = packet_[index_];
    if (d.kind != kind) {
      return generalFailure("malformed burst packet: element {} has tag {}, expected {} (tag {})", index_,
                            static_cast<uint32_t>(d.kind), what, static_cast<uint32_t>(kind));
    }
    ++index_;
    return &d;
  }
  size_t remaining() const { return packet_.size() - index_; }
  size_t index() const { return index_; }
  bool atEnd() const { return index_ == packet_.size(); }

 private:
  std::span<const Datum> packet_;
  size_t index_ = 0;
};

// A count read from a packet sizes a vector only up to what the packet could actually hold, so
// a forged count of four billion costs nothing before the walk finds the packet too short.
template <typename Datum>
size_t boundedReserve(uint32_t count, const Cursor<Datum>& cursor) {
  return std::min<size_t>(count, cursor.remaining());
}

Result<std::vector<RequestArgument>> readOperands(Cursor<FmqRequestDatum>& cursor, uint32_t count,
                                                  RequestKind infoKind, RequestKind dimensionKind,
                                                  const char* infoName, const char* dimensionName) {
  std::vector<RequestArgument> operands;
  operands.reserve(boundedReserve(count, cursor));
  for (uint32_t i = 0; i < count; ++i) {
    SABLE_ASSIGN_OR_RETURN(const FmqRequestDatum* info, cursor.next(infoKind, infoName));
    const auto& operand = infoKind == RequestKind::inputOperandInformation ? info->value.inputOperandInformation
                                                                           : info->value.outputOperandInformation;
    if (operand.hasNoValue > 1) {
      return generalFailure("malformed burst packet: {} {} has hasNoValue {}, not a bool", infoName, i,
                            operand.hasNoValue);
    }
    RequestArgument argument;
    argument.hasNoValue = operand.hasNoValue != 0;
    argument.location = operand.location;
    argument.dimensions.reserve(boundedReserve(operand.numberOfDimensions, cursor));
    for (uint32_t j = 0; j < operand.numberOfDimensions; ++j) {
      SABLE_ASSIGN_OR_RETURN(const FmqRequestDatum* dimension, cursor.next(dimensionKind, dimensionName));
      argument.dimensions.push_back(dimensionKind == RequestKind::inputOperandDimensionValue
                                        ? dimension->value.inputOperandDimensionValue
                                        : dimension->value.outputOperandDimensionValue);
    }
    operands.push_back(std::move(argument));
  }
  return operands;
}

bool isKnownErrorStatus(ErrorStatus status) {
  switch (status) {
#define SABLE_ERROR_STATUS_CASE(name, code) case ErrorStatus::name:
    SABLE_ERROR_STATUSES(SABLE_ERROR_STATUS_CASE)
#undef SABLE_ERROR_STATUS_CASE
    return true;
  }
  return false;
}

}  // namespace

Result<std::vector<FmqRequestDatum>> serializeRequest(const v1_0::Request& request, std::span<const int32_t> slots,
                                                      MeasureTiming measure) {
  if (slots.size() != request.pools.size()) {
    return invalidArgument("{} slots given for a request of {} pools", slots.size(), request.pools.size());
  }
  PacketSize size;
  size.add(1);  // packetInformation
  for (const auto& argument : request.inputs) size.add(1 + argument.dimensions.size());
  for (const auto& argument : request.outputs) size.add(1 + argument.dimensions.size());
  size.add(slots.size());
  size.add(1);  // measureTiming
  SABLE_ASSIGN_OR_RETURN(uint32_t packetSize, size.get("request"));

  std::vector<FmqRequestDatum> packet;
  packet.reserve(packetSize);
  auto info = datum<FmqRequestDatum>(RequestKind::packetInformation);
  info.value.packetInformation = {packetSize, static_cast<uint32_t>(request.inputs.size()),
                                  static_cast<uint32_t>(request.outputs.size()), static_cast<uint32_t>(slots.size())};
  packet.push_back(info);
  for (const auto& argument : request.inputs) {
    appendOperand(packet, argument, RequestKind::inputOperandInformation, RequestKind::inputOperandDimensionValue);
  }
  for (const auto& argument : request.outputs) {
    appendOperand(packet, argument, RequestKind::outputOperandInformation, RequestKind::outputOperandDimensionValue);
  }
  for (int32_t slot : slots) {
    auto pool = datum<FmqRequestDatum>(RequestKind::poolIdentifier);
    pool.value.poolIdentifier = slot;
    packet.push_back(pool);
  }
  auto timing = datum<FmqRequestDatum>(RequestKind::measureTiming);
  timing.value.measureTiming = measure;
  packet.push_back(timing);
  return packet;
}

Result<RequestPacket> deserializeRequest(std::span<const FmqRequestDatum> packet) {
  Cursor<FmqRequestDatum> cursor(packet);
  SABLE_ASSIGN_OR_RETURN(const FmqRequestDatum* head, cursor.next(RequestKind::packetInformation, "packetInformation"));
  const auto info = head->value.packetInformation;
  if (info.packetSize != packet.size()) {
    return generalFailure("malformed burst request: packetSize {} for a packet of {} elements", info.packetSize,
                          packet.size());
  }
  RequestPacket result;
  SABLE_ASSIGN_OR_RETURN(result.inputs, readOperands(cursor, info.numberOfInputOperands,
                                                     RequestKind::inputOperandInformation,
                                                     RequestKind::inputOperandDimensionValue,
                                                     "inputOperandInformation", "inputOperandDimensionValue"));
  SABLE_ASSIGN_OR_RETURN(result.outputs, readOperands(cursor, info.numberOfOutputOperands,
                                                      RequestKind::outputOperandInformation,
                                                      RequestKind::outputOperandDimensionValue,
                                                      "outputOperandInformation", "outputOperandDimensionValue"));
  result.slots.reserve(boundedReserve(info.numberOfPools, cursor));
  for (uint32_t i = 0; i < info.numberOfPools; ++i) {
    SABLE_ASSIGN_OR_RETURN(const FmqRequestDatum* pool, cursor.next(RequestKind::poolIdentifier, "poolIdentifier"));
    result.slots.push_back(pool->value.poolIdentifier);
  }
  SABLE_ASSIGN_OR_RETURN(const FmqRequestDatum* timing, cursor.next(RequestKind::measureTiming, "measureTiming"));
  if (timing->value.measureTiming != MeasureTiming::NO && timing->value.measureTiming != MeasureTiming::YES) {
    return generalFailure("malformed burst request: measureTiming {} is neither NO nor YES",
                          static_cast<int32_t>(timing->value.measureTiming));
  }
  result.measure = timing->value.measureTiming;
  if (!cursor.atEnd()) {
    return generalFailure("malformed burst request: {} elements follow measureTiming", cursor.remaining());
  }
  return result;
}

Result<std::vector<FmqResultDatum>> serializeResult(const ExecutionResult& result) {
  PacketSize size;
  size.add(1);
  for (const auto& shape : result.outputShapes) size.add(1 + shape.dimensions.size());
  size.add(1);
  SABLE_ASSIGN_OR_RETURN(uint32_t packetSize, size.get("result"));

  std::vector<FmqResultDatum> packet;
  packet.reserve(packetSize);
  auto info = datum<FmqResultDatum>(ResultKind::packetInformation);
  info.value.packetInformation = {packetSize, result.status, static_cast<uint32_t>(result.outputShapes.size())};
  packet.push_back(info);
  for (const auto& shape : result.outputShapes) {
    auto operand = datum<FmqResultDatum>(ResultKind::operandInformation);
    operand.value.operandInformation = {shape.isSufficient ? uint8_t{1} : uint8_t{0},
                                        static_cast<uint32_t>(shape.dimensions.size())};
    packet.push_back(operand);
    for (uint32_t extent : shape.dimensions) {
      auto dimension = datum<FmqResultDatum>(ResultKind::operandDimensionValue);
      dimension.value.operandDimensionValue = extent;
      packet.push_back(dimension);
    }
  }
  auto timing = datum<FmqResultDatum>(ResultKind::executionTiming);
  timing.value.executionTiming = result.timing;
  packet.push_back(timing);
  return packet;
}

Result<ExecutionResult> deserializeResult(std::span<const FmqResultDatum> packet) {
  Cursor<FmqResultDatum> cursor(packet);
  SABLE_ASSIGN_OR_RETURN(const FmqResultDatum* head, cursor.next(ResultKind::packetInformation, "packetInformation"));
  const auto info = head->value.packetInformation;
  if (info.packetSize != packet.size()) {
    return generalFailure("malformed burst result: packetSize {} for a packet of {} elements", info.packetSize,
                          packet.size());
  }
  if (!isKnownErrorStatus(info.errorStatus)) {
    return generalFailure("malformed burst result: errorStatus {} is not an ErrorStatus",
                          static_cast<int32_t>(info.errorStatus));
  }
  ExecutionResult result;
  result.status = info.errorStatus;
  result.outputShapes.reserve(boundedReserve(info.numberOfOperands, cursor));
  for (uint32_t i = 0; i < info.numberOfOperands; ++i) {
    SABLE_ASSIGN_OR_RETURN(const FmqResultDatum* operand,
                           cursor.next(ResultKind::operandInformation, "operandInformation"));
    const auto operandInfo = operand->value.operandInformation;
    if (operandInfo.isSufficient > 1) {
      return generalFailure("malformed burst result: output {} has isSufficient {}, not a bool", i,
                            operandInfo.isSufficient);
    }
    OutputShape shape;
    shape.isSufficient = operandInfo.isSufficient != 0;
    shape.dimensions.reserve(boundedReserve(operandInfo.numberOfDimensions, cursor));
    for (uint32_t j = 0; j < operandInfo.numberOfDimensions; ++j) {
      SABLE_ASSIGN_OR_RETURN(const FmqResultDatum* dimension,
                             cursor.next(ResultKind::operandDimensionValue, "operandDimensionValue"));
      shape.dimensions.push_back(dimension->value.operandDimensionValue);
    }
    result.outputShapes.push_back(std::move(shape));
  }
  SABLE_ASSIGN_OR_RETURN(const FmqResultDatum* timing, cursor.next(ResultKind::executionTiming, "executionTiming"));
  result.timing = timing->value.executionTiming;
  if (!cursor.atEnd()) {
    return generalFailure("malformed burst result: {} elements follow executionTiming", cursor.remaining());
  }
  return result;
}

}  // namespace sable::hal::burst
