// Driver-managed buffers (IDevice::allocate, IBuffer, request pools given by token): the HAL 1.3
// memory domain rules of AOSP's validateMemoryDesc and the sample driver's ManagedBuffer, for
// every Sable driver. The storage is host shared memory: each execution copies a buffer into the
// request memory the driver reads and copies outputs back (docs/hal.md says why).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>
#include <vector>

#include "sable/hal/interfaces.h"
#include "sable/hal/result.h"
#include "sable/hal/shared_memory.h"

namespace sable::hal {

// One role a buffer may play: input or output `ioIndex` of the prepared model `owner`.
struct BufferRoleKey {
  const void* owner = nullptr;
  uint32_t ioIndex = 0;
  bool isInput = true;
  auto operator<=>(const BufferRoleKey&) const = default;
};

class ManagedBuffer {
 public:
  ManagedBuffer(Operand operand, std::shared_ptr<SharedMemory> storage, std::set<BufferRoleKey> roles)
      : operand_(std::move(operand)), storage_(std::move(storage)), roles_(std::move(roles)) {}

  const Operand& operand() const { return operand_; }  // type, quantization and the dimensions
  size_t size() const { return storage_->size(); }
  // INVALID_ARGUMENT when the buffer was not allocated for this role.
  Result<void> checkRole(const BufferRoleKey& role) const;

  // The content, for an input (GENERAL_FAILURE while uninitialized).
  Result<void> readInto(uint8_t* dst, size_t size) const;
  // New content from an output or copyFrom: the buffer is initialized from then on.
  void write(const uint8_t* src, size_t size);
  void setInitialized(bool initialized);
  bool initialized() const;

 private:
  const Operand operand_;
  const std::shared_ptr<SharedMemory> storage_;
  const std::set<BufferRoleKey> roles_;
  mutable std::mutex mutex_;
  bool initialized_ = false;
};

// Tokens of the buffers of one device. A token stays valid while its IBuffer lives.
class BufferTracker {
 public:
  uint32_t add(std::shared_ptr<ManagedBuffer> buffer);
  void remove(uint32_t token);
  std::shared_ptr<ManagedBuffer> find(uint32_t token) const;

 private:
  mutable std::mutex mutex_;
  uint32_t next_ = 1;
  std::map<uint32_t, std::shared_ptr<ManagedBuffer>> buffers_;
};

// The operand model `index` (input or output) of a prepared model, for allocate's role checks.
struct RoleOperand {
  const Operand* operand = nullptr;
  BufferRoleKey key;
};

// IDevice::allocate for drivers whose prepared models are `models` (each prepared model's
// identity and main subgraph; null where a prepared model is not this driver's).
struct PreparedModelView {
  const void* owner = nullptr;
  const Model* model = nullptr;
};
AllocateResult allocateBuffer(const std::shared_ptr<BufferTracker>& tracker, const BufferDesc& desc,
                              const std::vector<PreparedModelView>& preparedModels,
                              const std::vector<BufferRole>& inputRoles, const std::vector<BufferRole>& outputRoles,
                              std::string* message);

// A request whose token pools are replaced by shared memory holding the buffers' content, and
// what to do with the outputs once the execution is over.
class ResolvedRequest {
 public:
  // Resolves `request` for the prepared model `owner`; errors: unknown token or role
  // (INVALID_ARGUMENT), an uninitialized input buffer (GENERAL_FAILURE).
  static Result<ResolvedRequest> resolve(const Request& request, const void* owner, const BufferTracker& tracker);
  const Request& request() const { return request_; }
  // After the execution: outputs written to buffers become their content (success), or leave
  // the buffers uninitialized (failure), as the HAL requires.
  void finish(bool succeeded);

 private:
  Request request_;
  struct OutputCopy {
    std::shared_ptr<ManagedBuffer> buffer;
    std::shared_ptr<SharedMemory> memory;
  };
  std::vector<OutputCopy> outputs_;
};

}  // namespace sable::hal
