#include "managed_buffer.h"

#include <cfloat>
#include <cstring>

#include <fmt/ranges.h>

namespace sable::hal {
namespace {

// Two shapes that must describe the same tensor, merged (0 and empty mean "unknown"); nullopt
// when they disagree.
std::optional<std::vector<uint32_t>> combineDimensions(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  if (a.size() != b.size()) return std::nullopt;
  std::vector<uint32_t> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != 0 && b[i] != 0 && a[i] != b[i]) return std::nullopt;
    out[i] = a[i] != 0 ? a[i] : b[i];
  }
  return out;
}

bool sameQuantization(const Operand& a, const Operand& b) {
  if (a.type != b.type || a.scale != b.scale || a.zeroPoint != b.zeroPoint) return false;
  const auto* qa = a.channelQuant();
  const auto* qb = b.channelQuant();
  if ((qa == nullptr) != (qb == nullptr)) return false;
  return qa == nullptr || (qa->scales == qb->scales && qa->channelDim == qb->channelDim);
}

class HalBuffer final : public IBuffer {
 public:
  HalBuffer(std::shared_ptr<ManagedBuffer> buffer, std::shared_ptr<BufferTracker> tracker, uint32_t token)
      : buffer_(std::move(buffer)), tracker_(std::move(tracker)), token_(token) {}
  ~HalBuffer() override { tracker_->remove(token_); }

  ErrorStatus copyTo(const MemoryPool& dst) override {
    if (!dst) return ErrorStatus::INVALID_ARGUMENT;
    if (dst->size() != buffer_->size()) return ErrorStatus::INVALID_ARGUMENT;
    const auto read = buffer_->readInto(dst->data(), dst->size());
    return read.ok() ? ErrorStatus::NONE : read.error().status;
  }

  ErrorStatus copyFrom(const MemoryPool& src, const std::vector<uint32_t>& dimensions) override {
    if (!src) return ErrorStatus::INVALID_ARGUMENT;
    const Operand& operand = buffer_->operand();
    const auto combined = combineDimensions(operand.dimensions, dimensions);
    if (!combined || hasUnknownDimensions(operand.type, *combined)) return ErrorStatus::INVALID_ARGUMENT;
    if (sizeOfData(operand.type, *combined).value_or(0) != src->size() || src->size() != buffer_->size()) {
      return ErrorStatus::INVALID_ARGUMENT;
    }
    buffer_->write(src->data(), src->size());
    return ErrorStatus::NONE;
  }

 private:
  std::shared_ptr<ManagedBuffer> buffer_;
  std::shared_ptr<BufferTracker> tracker_;
  uint32_t token_;
};

}  // namespace

Result<void> ManagedBuffer::checkRole(const BufferRoleKey& role) const {
  if (roles_.count(role) == 0) {
    return invalidArgument("the buffer was not allocated for {} {} of this prepared model",
                           role.isInput ? "input" : "output", role.ioIndex);
  }
  return {};
}

Result<void> ManagedBuffer::readInto(uint8_t* dst, size_t size) const {
  std::lock_guard lock(mutex_);
  if (!initialized_) return generalFailure("the buffer is not initialized");
  if (size != storage_->size()) return invalidArgument("{} bytes asked of a buffer of {}", size, storage_->size());
  std::memcpy(dst, storage_->data(), size);
  return {};
}

void ManagedBuffer::write(const uint8_t* src, size_t size) {
  std::lock_guard lock(mutex_);
  std::memcpy(storage_->data(), src, std::min(size, storage_->size()));
  initialized_ = true;
}

void ManagedBuffer::setInitialized(bool initialized) {
  std::lock_guard lock(mutex_);
  initialized_ = initialized;
}

bool ManagedBuffer::initialized() const {
  std::lock_guard lock(mutex_);
  return initialized_;
}

uint32_t BufferTracker::add(std::shared_ptr<ManagedBuffer> buffer) {
  std::lock_guard lock(mutex_);
  while (next_ == 0 || buffers_.count(next_) != 0) ++next_;  // 0 is never a token
  const uint32_t token = next_++;
  buffers_.emplace(token, std::move(buffer));
  return token;
}

void BufferTracker::remove(uint32_t token) {
  std::lock_guard lock(mutex_);
  buffers_.erase(token);
}

std::shared_ptr<ManagedBuffer> BufferTracker::find(uint32_t token) const {
  std::lock_guard lock(mutex_);
  const auto it = buffers_.find(token);
  return it == buffers_.end() ? nullptr : it->second;
}

AllocateResult allocateBuffer(const std::shared_ptr<BufferTracker>& tracker, const BufferDesc& desc,
                              const std::vector<PreparedModelView>& preparedModels,
                              const std::vector<BufferRole>& inputRoles, const std::vector<BufferRole>& outputRoles,
                              std::string* message) {
  auto fail = [&](ErrorStatus status, std::string why) {
    *message = std::move(why);
    return AllocateResult{status, nullptr, 0};
  };
  if (preparedModels.empty()) return fail(ErrorStatus::INVALID_ARGUMENT, "no prepared model given");
  if (inputRoles.empty() && outputRoles.empty()) return fail(ErrorStatus::INVALID_ARGUMENT, "no role given");
  for (size_t i = 0; i < preparedModels.size(); ++i) {
    if (preparedModels[i].model == nullptr) {
      return fail(ErrorStatus::INVALID_ARGUMENT, fmt::format("prepared model {} is not one of this device's", i));
    }
  }
  const Operand* first = nullptr;
  std::vector<uint32_t> dimensions = desc.dimensions;
  std::set<BufferRoleKey> roles;
  auto addRoles = [&](const std::vector<BufferRole>& list, bool isInput) -> std::optional<std::string> {
    const char* kind = isInput ? "input" : "output";
    for (const BufferRole& role : list) {
      if (role.modelIndex >= preparedModels.size()) {
        return fmt::format("{} role: modelIndex {} out of range ({} prepared models)", kind, role.modelIndex,
                           preparedModels.size());
      }
      const PreparedModelView& view = preparedModels[role.modelIndex];
      const Subgraph& main = view.model->main;
      const auto& indexes = isInput ? main.inputIndexes : main.outputIndexes;
      if (role.ioIndex >= indexes.size()) {
        return fmt::format("{} role: ioIndex {} out of range (the model has {})", kind, role.ioIndex, indexes.size());
      }
      if (!(role.frequency > 0.0f && role.frequency <= 1.0f)) {
        return fmt::format("{} role {}: frequency {} is not in (0, 1]", kind, role.ioIndex, role.frequency);
      }
      const BufferRoleKey key{view.owner, role.ioIndex, isInput};
      if (!roles.insert(key).second) {
        return fmt::format("{} role {} of prepared model {} is given twice", kind, role.ioIndex, role.modelIndex);
      }
      const Operand& operand = main.operands[indexes[role.ioIndex]];
      if (first == nullptr) {
        first = &operand;
      } else if (!sameQuantization(*first, operand)) {
        return fmt::format("{} role {} of prepared model {}: its operand's type or quantization differs from the "
                           "other roles'", kind, role.ioIndex, role.modelIndex);
      }
      const auto combined = combineDimensions(dimensions, operand.dimensions);
      if (!combined) {
        return fmt::format("{} role {} of prepared model {}: dimensions {} disagree with {}", kind, role.ioIndex,
                           role.modelIndex, operand.dimensions, dimensions);
      }
      dimensions = *combined;
    }
    return std::nullopt;
  };
  if (auto error = addRoles(inputRoles, true)) return fail(ErrorStatus::INVALID_ARGUMENT, *error);
  if (auto error = addRoles(outputRoles, false)) return fail(ErrorStatus::INVALID_ARGUMENT, *error);
  if (!isTensorType(first->type) && !dimensions.empty()) {
    return fail(ErrorStatus::INVALID_ARGUMENT, fmt::format("dimensions {} given for a scalar", dimensions));
  }
  // As the AOSP sample driver: a buffer of unknown size cannot be allocated here (the HAL lets a
  // driver decline with GENERAL_FAILURE).
  const std::optional<uint32_t> size = sizeOfData(first->type, dimensions);
  if (hasUnknownDimensions(first->type, dimensions) || !size || *size == 0) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                fmt::format("the buffer's dimensions {} are not fully specified by the descriptor and the roles",
                            dimensions));
  }
  auto storage = SharedMemory::create(*size, "sable-buffer");
  if (!storage.ok()) return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT, storage.error().message);
  Operand operand = *first;
  operand.dimensions = dimensions;
  auto buffer = std::make_shared<ManagedBuffer>(std::move(operand), std::move(*storage), std::move(roles));
  const uint32_t token = tracker->add(buffer);
  return AllocateResult{ErrorStatus::NONE, std::make_shared<HalBuffer>(std::move(buffer), tracker, token), token};
}

Result<ResolvedRequest> ResolvedRequest::resolve(const Request& request, const void* owner,
                                                 const BufferTracker& tracker) {
  ResolvedRequest out;
  out.request_ = request;
  std::vector<std::shared_ptr<ManagedBuffer>> buffers(request.pools.size());
  std::vector<std::shared_ptr<SharedMemory>> copies(request.pools.size());
  for (size_t i = 0; i < request.pools.size(); ++i) {
    const auto* token = std::get_if<BufferToken>(&request.pools[i]);
    if (token == nullptr) continue;
    buffers[i] = tracker.find(token->token);
    if (!buffers[i]) return invalidArgument("request pool {}: no buffer has token {}", i, token->token);
    SABLE_ASSIGN_OR_RETURN(copies[i], SharedMemory::create(buffers[i]->size(), "sable-buffer-copy"));
    out.request_.pools[i] = copies[i];
  }
  auto bind = [&](std::vector<RequestArgument>& arguments, bool isInput) -> Result<void> {
    for (uint32_t k = 0; k < arguments.size(); ++k) {
      RequestArgument& argument = arguments[k];
      if (argument.hasNoValue || argument.location.poolIndex >= buffers.size()) continue;
      const auto& buffer = buffers[argument.location.poolIndex];
      if (!buffer) continue;
      SABLE_TRY(buffer->checkRole({owner, k, isInput}));
      const auto& dims = buffer->operand().dimensions;
      if (!argument.dimensions.empty() && argument.dimensions != dims) {
        return invalidArgument("request {} {}: dimensions {} differ from the buffer's {}", isInput ? "input" : "output",
                               k, argument.dimensions, dims);
      }
      argument.location.offset = 0;
      argument.location.length = static_cast<uint32_t>(buffer->size());
      const auto& memory = copies[argument.location.poolIndex];
      if (isInput) {
        SABLE_TRY(buffer->readInto(memory->data(), memory->size()));
      } else {
        out.outputs_.push_back({buffer, memory});
      }
    }
    return {};
  };
  SABLE_TRY(bind(out.request_.inputs, true));
  SABLE_TRY(bind(out.request_.outputs, false));
  return out;
}

void ResolvedRequest::finish(bool succeeded) {
  for (const auto& copy : outputs_) {
    if (succeeded) {
      copy.buffer->write(copy.memory->data(), copy.memory->size());
    } else {
      copy.buffer->setInitialized(false);
    }
  }
}

}  // namespace sable::hal
