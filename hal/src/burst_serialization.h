// The wire format of the execution burst: the elements of the request and result FMQs
// (FmqRequestDatum / FmqResultDatum of android.hardware.neuralnetworks@1.2 types.hal, each a
// safe_union: a discriminator and one of the alternatives) and the packets built from them.
//
// A request packet is, in this order:
//   packetInformation {packetSize, numberOfInputOperands, numberOfOutputOperands, numberOfPools}
//   for each input:  inputOperandInformation {hasNoValue, location, numberOfDimensions},
//                    then numberOfDimensions x inputOperandDimensionValue
//   for each output: outputOperandInformation, then outputOperandDimensionValue x its dimensions
//   numberOfPools x poolIdentifier (the slot that stands for the pool's memory)
//   measureTiming
// A result packet is:
//   packetInformation {packetSize, errorStatus, numberOfOperands}
//   for each output: operandInformation {isSufficient, numberOfDimensions},
//                    then operandDimensionValue x numberOfDimensions
//   executionTiming
// packetSize counts every element of the packet, packetInformation included.
//
// Private to hal/: burst.cc and the burst tests use it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "fmq.h"
#include "sable/hal/interfaces.h"
#include "sable/hal/result.h"
#include "sable/hal/types.h"
#include "sable/hal/versioned_types.h"

namespace sable::hal::burst {

// Elements per channel, as AOSP's burst uses (kExecutionBurstChannelLength).
constexpr uint32_t kChannelLength = 1024;

struct FmqRequestDatum {
  static constexpr uint32_t kFmqElementTag = 0x52514d46;  // "FMQR": refuses a result channel here
  enum class Kind : uint32_t {
    packetInformation = 0,
    inputOperandInformation = 1,
    inputOperandDimensionValue = 2,
    outputOperandInformation = 3,
    outputOperandDimensionValue = 4,
    poolIdentifier = 5,
    measureTiming = 6,
  };
  struct PacketInformation {
    uint32_t packetSize;
    uint32_t numberOfInputOperands;
    uint32_t numberOfOutputOperands;
    uint32_t numberOfPools;
  };
  struct OperandInformation {
    uint8_t hasNoValue;  // HIDL bool; a byte so that a peer's 2 is caught, not undefined
    DataLocation location;
    uint32_t numberOfDimensions;
  };
  Kind kind;
  union Value {
    Value() : packetInformation{} {}  // members with default initializers would delete the default
    PacketInformation packetInformation;
    OperandInformation inputOperandInformation;
    uint32_t inputOperandDimensionValue;
    OperandInformation outputOperandInformation;
    uint32_t outputOperandDimensionValue;
    int32_t poolIdentifier;
    MeasureTiming measureTiming;
  } value;
};

struct FmqResultDatum {
  static constexpr uint32_t kFmqElementTag = 0x53514d46;  // "FMQS"
  enum class Kind : uint32_t {
    packetInformation = 0,
    operandInformation = 1,
    operandDimensionValue = 2,
    executionTiming = 3,
  };
  struct PacketInformation {
    uint32_t packetSize;
    ErrorStatus errorStatus;
    uint32_t numberOfOperands;
  };
  struct OperandInformation {
    uint8_t isSufficient;  // HIDL bool
    uint32_t numberOfDimensions;
  };
  Kind kind;
  union Value {
    Value() : packetInformation{} {}
    PacketInformation packetInformation;
    OperandInformation operandInformation;
    uint32_t operandDimensionValue;
    Timing executionTiming;
  } value;
};

static_assert(std::is_trivially_copyable_v<FmqRequestDatum> && std::is_trivially_copyable_v<FmqResultDatum>);

// A request as the burst carries it: the pools are slots.
struct RequestPacket {
  std::vector<RequestArgument> inputs;
  std::vector<RequestArgument> outputs;
  std::vector<int32_t> slots;
  MeasureTiming measure = MeasureTiming::NO;
};

// `slots[i]` stands for request.pools[i] (the sizes must agree).
Result<std::vector<FmqRequestDatum>> serializeRequest(const v1_0::Request& request, std::span<const int32_t> slots,
                                                      MeasureTiming measure);
// Checks every count, tag and value: garbage gives GENERAL_FAILURE (what the HAL's burst server
// answers for a packet it cannot parse), never a crash or an allocation the packet cannot back.
Result<RequestPacket> deserializeRequest(std::span<const FmqRequestDatum> packet);

Result<std::vector<FmqResultDatum>> serializeResult(const ExecutionResult& result);
Result<ExecutionResult> deserializeResult(std::span<const FmqResultDatum> packet);

// Reads one packet (packetInformation first, then packetSize - 1 more elements). A packet that
// cannot be framed (wrong first tag, a size that is 0 or exceeds what was written) makes the
// reader drop everything available, so that the next packet starts on a boundary again.
template <typename Datum>
Result<std::vector<Datum>> readPacket(Fmq<Datum>& channel) {
  Datum first{};
  SABLE_TRY(channel.read(std::span<Datum>(&first, 1)));
  if (first.kind != Datum::Kind::packetInformation) {
    channel.discardAvailable();
    return generalFailure("malformed packet: it starts with tag {}, not packetInformation",
                          static_cast<uint32_t>(first.kind));
  }
  const uint32_t size = first.value.packetInformation.packetSize;
  SABLE_ASSIGN_OR_RETURN(size_t rest, channel.availableToRead());
  if (size == 0 || size - 1 > rest) {
    channel.discardAvailable();
    return generalFailure("malformed packet: packetSize {} but {} elements were written", size, rest + 1);
  }
  std::vector<Datum> packet(size);
  packet[0] = first;
  SABLE_TRY(channel.read(std::span<Datum>(packet).subspan(1)));
  return packet;
}

}  // namespace sable::hal::burst
