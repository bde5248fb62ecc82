// VTS-style validation tests: every valid model of the conformance corpus, broken in one way at
// a time, must be rejected with INVALID_ARGUMENT (and never crash). One test per kind of
// mutation; each walks the whole corpus. Each mutant is also rejected by the sable-npu driver's
// getSupportedOperations_1_3 and prepareModel_1_3, whose callback is notified exactly once.
#include <cstdlib>
#include <filesystem>
#include <functional>

#include <gtest/gtest.h>

#include "sable/hal/callbacks.h"
#include "sable/hal/validation.h"
#include "sable/runtime/npu_device.h"
#include "sable/runtime/corpus.h"

namespace sable::hal {
namespace {

std::filesystem::path corpusDir() {
  const char* shared = std::getenv("SABLE_SHARED_DIR");
  return std::filesystem::path(shared != nullptr ? shared : "../shared") / "corpus";
}

// Applies `mutate` to a copy of the subgraph, swaps it into the model, validates, swaps back.
class MutationChecker {
 public:
  explicit MutationChecker(Model& model, std::string name) : model_(model), name_(std::move(name)) {}

  // `mutate` returns false when this mutation does not apply to the model.
  void expectInvalid(const std::string& what, const std::function<bool(Model&)>& mutate) {
    Model& m = model_;
    Subgraph saved = m.main;
    std::vector<Subgraph> savedReferenced = m.referenced;
    if (mutate(m)) {
      ++checked_;
      auto result = validateModel(m);
      if (result.ok()) {
        failures_.push_back(name_ + ": " + what + ": accepted");
      } else if (result.error().status != ErrorStatus::INVALID_ARGUMENT) {
        failures_.push_back(name_ + ": " + what + ": " + std::string(toString(result.error().status)));
      }
      // The same mutant through the sable-npu driver's HAL entry points (validation happens
      // there before the driver is reached, so no device server is needed).
      const auto supported = device_->getSupportedOperations_1_3(m);
      if (supported.status != ErrorStatus::INVALID_ARGUMENT) {
        failures_.push_back(name_ + ": " + what + ": getSupportedOperations_1_3 gave " +
                            std::string(toString(supported.status)));
      }
      auto callback = std::make_shared<PreparedModelCallback>();
      const ErrorStatus launched = device_->prepareModel_1_3(m, ExecutionPreference::FAST_SINGLE_ANSWER,
                                                             Priority::MEDIUM, {}, {}, {}, CacheToken{}, callback);
      if (launched != ErrorStatus::INVALID_ARGUMENT || !callback->waitFor(std::chrono::seconds(10)) ||
          callback->status() != ErrorStatus::INVALID_ARGUMENT || callback->notifications() != 1) {
        failures_.push_back(name_ + ": " + what + ": prepareModel_1_3 gave " + std::string(toString(launched)) +
                            ", callback " + std::string(toString(callback->status())) + " notified " +
                            std::to_string(callback->notifications()) + " times");
      }
    }
    m.main = std::move(saved);
    m.referenced = std::move(savedReferenced);
  }
  size_t checked() const { return checked_; }
  std::vector<std::string>& failures() { return failures_; }

 private:
  Model& model_;
  std::string name_;
  std::shared_ptr<IDevice> device_ = runtime::npuHalDevice();
  size_t checked_ = 0;
  std::vector<std::string> failures_;
};

using Mutation = std::function<void(MutationChecker&, const Model&)>;

// Runs `mutation` on every corpus model that validates, and requires every mutant rejected.
void runOnCorpus(const Mutation& mutation) {
  const auto dir = corpusDir();
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "conformance corpus not found at " << dir << " (set SABLE_SHARED_DIR)";
  auto files = runtime::findCorpusFiles({dir.string()});
  ASSERT_TRUE(files.ok()) << files.error().message;
  size_t models = 0, mutants = 0, invalidBase = 0;
  std::vector<std::string> failures;
  for (const auto& file : *files) {
    auto reader = runtime::CorpusReader::open(file);
    ASSERT_TRUE(reader.ok()) << reader.error().message;
    while (auto test = reader->next()) {
      ASSERT_TRUE(test->ok()) << test->error().message;
      Model& model = (*test)->model;
      if (!validateModel(model).ok()) {
        ++invalidBase;  // expect_failure models and the like: nothing valid to mutate
        continue;
      }
      ++models;
      MutationChecker checker(model, (*test)->name);
      mutation(checker, model);
      mutants += checker.checked();
      for (auto& f : checker.failures()) failures.push_back(std::move(f));
    }
  }
  std::cout << models << " valid models, " << mutants << " mutants, " << invalidBase << " invalid base models skipped\n";
  EXPECT_GT(models, 1000u) << "too few valid corpus models: is validation rejecting valid models?";
  EXPECT_GT(mutants, 0u);
  EXPECT_TRUE(failures.empty()) << failures.size() << " mutants were not rejected with INVALID_ARGUMENT, e.g.:\n"
                                << [&] {
                                     std::string s;
                                     for (size_t i = 0; i < failures.size() && i < 25; ++i) s += "  " + failures[i] + "\n";
                                     return s;
                                   }();
}

size_t operandCount(const Model& m) { return m.main.operands.size(); }

template <typename T>
T castTo(int32_t code) {
  return static_cast<T>(code);
}

// Recounts numberOfConsumers after a mutation that changes operation inputs on purpose, so
// that the model is rejected for the rule under test and not for a stale count.
void recountConsumers(Subgraph& g) {
  for (auto& o : g.operands) o.numberOfConsumers = 0;
  for (const auto& op : g.operations)
    for (uint32_t i : op.inputs)
      if (i < g.operands.size()) ++g.operands[i].numberOfConsumers;
}

TEST(ValidationMutation, InvalidOperandTypeIsRejected) {
  runOnCorpus([](MutationChecker& c, const Model& base) {
    for (size_t i = 0; i < operandCount(base); ++i) {
      for (int32_t code : {-1, 16, 9999, 10002}) {
        c.expectInvalid(fmt::format("operand {} type code {}", i, code), [&](Model& m) {
          m.main.operands[i].type = castTo<OperandType>(code);
          return true;
        });
      }
    }
  });
}

TEST(ValidationMutation, ScalarWithRankIsRejected) {
  runOnCorpus([](MutationChecker& c, const Model& base) {
    for (size_t i = 0; i < operandCount(base); ++i) {
      if (!isScalarType(base.main.operands[i].type)) continue;
      c.expectInvalid(fmt::format("scalar operand {} given rank 1", i), [&](Model& m) {
        m.main.operands[i].dimensions = {1};
        return true;
      });
    }
  });
}

TEST(ValidationMutation, ConstantDimensionsThatDisagreeWithItsDataAreRejected) {
  runOnCorpus([](MutationChecker& c, const Model& base) {
    for (size_t i = 0; i < operandCount(base); ++i) {
      const Operand& o = base.main.operands[i];
      const bool constant = o.lifetime == OperandLifeTime::CONSTANT_COPY || o.lifetime == OperandLifeTime::CONSTANT_REFERENCE;
      if (!constant || !isTensorType(o.type) || o.dimensions.empty() || o.location.length == 0) continue;
      c.expectInvalid(fmt::format("constant operand {} with its first dimension doubled", i), [&](Model& m) {
        m.main.operands[i].dimensions[0] *= 2;
        return true;
      });
    }
  });
}

// A scale that the operand's type forbids, or nullopt when every scale is allowed.
std::vector<float> invalidScales(const Operand& o) {
  switch (o.type) {
    case OperandType::FLOAT32:
    case OperandType::INT32:
    case OperandType::UINT32:
    case OperandType::BOOL:
    case OperandType::FLOAT16:
    case OperandType::TENSOR_FLOAT32:
    case OperandType::TENSOR_FLOAT16:
    case OperandType::TENSOR_BOOL8:
    case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
      return {1.0f};
    case OperandType::TENSOR_INT32:
      return {-1.0f};
    case OperandType::TENSOR_QUANT8_ASYMM:
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case OperandType::TENSOR_QUANT8_SYMM:
    case OperandType::TENSOR_QUANT16_ASYMM:
    case OperandType::TENSOR_QUANT16_SYMM:
      return {0.0f, -1.0f};
    default:
      return {};
  }
}

TEST(ValidationMutation, InvalidScaleForTheTypeIsRejected) {
  runOnCorpus([](MutationChecker& c, const Model& base) {
    for (size_t i = 0; i < operandCount(base); ++i) {
      for (float scale : invalidScales(base.main.operands[i])) {
        c.expectInvalid(fmt::format("operand {} scale {}", i, scale), [&](Model& m) {
          m.main.operands[i].scale = scale;
          return true;
        });
      }
    }
  });
}

std::vector<int32_t> invalidZeroPoints(const Operand& o) {
  switch (o.type) {
    case OperandType::FLOAT32:
    case OperandType::INT32:
    case OperandType::UINT32:
    case OperandType::BOOL:
    case OperandType::FLOAT16:
    case OperandType::TENSOR_FLOAT32:
    case OperandType::TENSOR_FLOAT16:
    case OperandType::TENSOR_BOOL8:
    case OperandType::TENSOR_QUANT8_SYMM:
    case OperandType::TENSOR_QUANT16_SYMM:
    case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
      return {1};
    case OperandType::TENSOR_QUANT8_ASYMM:
      return {-1, 256};
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      return {-129, 128};
    case OperandType::TENSOR_QUANT16_ASYMM:
      return {-1, 65536};
    default:
      return {};
  }
}

TEST(ValidationMutation, InvalidZeroPointForTheTypeIsRejected) {
  runOnCorpus([](MutationChecker& c, const Model& base) {
    for (size_t i = 0; i < operandCount(base); ++i) {
      for (int32_t zeroPoint : invalidZeroPoints(base.main.operands[i])) {
        c.expectInvalid(fmt::format("operand {} zero point {}", i, zeroPoint), [&](Model& m) {
          m.main.operands[i].zeroPoint = zeroPoint;
          return true;
        });
      }
    }
  });
}

TEST(ValidationMutation, OutOfRangeOperandIndexIsRejected) {
  runOnCorpus([](MutationChecker& c, const Model& base) {
    const auto bad = static_cast<uint32_t>(operandCount(base));
    for (size_t op = 0; op < base.main.operations.size(); ++op) {
      for (size_t i = 0; i < base.main.operations[op].inputs.size(); ++i) {
        c.expectInvalid(fmt::format("operation {} input {} -> operand {}", op, i, bad), [&](Model& m) {
          m.main.operations[op].inputs[i] = bad;
          return true;
        });
      }
      for (size_t i = 0; i < base.main.operations[op].outputs.size(); ++i) {
        c.expectInvalid(fmt::format("operation {} output {} -> operand {}", op, i, bad), [&](Model& m) {
          m.main.operations[op].outputs[i] = bad;
          return true;
        });
      }
    }
    c.expectInvalid("model input index out of range", [&](Model& m) {
      if (m.main.inputIndexes.empty()) return false;
      m.main.inputIndexes[0] = bad;
      return true;
    });
    c.expectInvalid("model output index out of range", [&](Model& m) {
      m.main.outputIndexes[0] = bad;
      return true;
    });
  });
}

// Operations whose input count is open-ended: more inputs can still be valid.
bool isVariadic(OperationType type) {
  return type == OperationType::CONCATENATION || type == OperationType::IF || type == OperationType::WHILE;
}

TEST(ValidationMutation, WrongInputOrOutputCountIsRejected) {
  runOnCorpus([](MutationChecker& c, const Model& base) {
    for (size_t op = 0; op < base.main.operations.size(); ++op) {
      c.expectInvalid(fmt::format("operation {} with no inputs", op), [&](Model& m) {
        m.main.operations[op].inputs.clear();
        recountConsumers(m.main);
        return true;
      });
      if (!isVariadic(base.main.operations[op].type)) {
        c.expectInvalid(fmt::format("operation {} with 16 extra inputs", op), [&](Model& m) {
          auto& inputs = m.main.operations[op].inputs;
          const uint32_t last = inputs.empty() ? 0 : inputs.back();
          for (int k = 0; k < 16; ++k) inputs.push_back(last);
          recountConsumers(m.main);
          return !inputs.empty();
        });
      }
      // Outputs removed: their operands lose their writer too, but every operation needs at
      // least one output whatever else holds.
      c.expectInvalid(fmt::format("operation {} with no outputs", op), [&](Model& m) {
        m.main.operations[op].outputs.clear();
        return true;
      });
    }
  });
}

TEST(ValidationMutation, InvalidLifetimeIsRejected) {
  runOnCorpus([](MutationChecker& c, const Model& base) {
    for (size_t i = 0; i < operandCount(base); ++i) {
      for (int32_t code : {-1, 7, 100}) {
        c.expectInvalid(fmt::format("operand {} lifetime code {}", i, code), [&](Model& m) {
          m.main.operands[i].lifetime = castTo<OperandLifeTime>(code);
          return true;
        });
      }
      // An operand that claims to be a model input without being listed as one.
      if (base.main.operands[i].lifetime == OperandLifeTime::TEMPORARY_VARIABLE) {
        c.expectInvalid(fmt::format("temporary operand {} relabelled SUBGRAPH_INPUT", i), [&](Model& m) {
          m.main.operands[i].lifetime = OperandLifeTime::SUBGRAPH_INPUT;
          return true;
        });
      }
    }
  });
}

TEST(ValidationMutation, InvalidDataLocationIsRejected) {
  runOnCorpus([](MutationChecker& c, const Model& base) {
    for (size_t i = 0; i < operandCount(base); ++i) {
      const Operand& o = base.main.operands[i];
      switch (o.lifetime) {
        case OperandLifeTime::CONSTANT_COPY:
          c.expectInvalid(fmt::format("constant {} offset past operandValues", i), [&](Model& m) {
            m.main.operands[i].location.offset = static_cast<uint32_t>(m.operandValues.size());
            return m.main.operands[i].location.length > 0;
          });
          c.expectInvalid(fmt::format("constant {} length + 1", i), [&](Model& m) {
            m.main.operands[i].location.length += 1;
            return true;
          });
          break;
        case OperandLifeTime::CONSTANT_REFERENCE:
          c.expectInvalid(fmt::format("constant {} pool index out of range", i), [&](Model& m) {
            m.main.operands[i].location.poolIndex = static_cast<uint32_t>(m.pools.size());
            return true;
          });
          c.expectInvalid(fmt::format("constant {} offset overflowing its pool", i), [&](Model& m) {
            m.main.operands[i].location.offset = UINT32_MAX - 1;
            return true;
          });
          break;
        case OperandLifeTime::TEMPORARY_VARIABLE:
        case OperandLifeTime::SUBGRAPH_INPUT:
        case OperandLifeTime::SUBGRAPH_OUTPUT:
          c.expectInvalid(fmt::format("operand {} with a data location", i), [&](Model& m) {
            m.main.operands[i].location = {0, 4, 4};
            return true;
          });
          break;
        default:
          break;
      }
    }
  });
}

TEST(ValidationMutation, CycleIsRejected) {
  runOnCorpus([](MutationChecker& c, const Model& base) {
    // The first operation reads an output of the last one: either a cycle or a read before the
    // write, both outside execution order.
    const auto& ops = base.main.operations;
    if (ops.empty()) return;
    c.expectInvalid("first operation reads the last operation's output", [&](Model& m) {
      auto& first = m.main.operations.front();
      const auto& last = m.main.operations.back();
      if (first.inputs.empty() || last.outputs.empty()) return false;
      first.inputs[0] = last.outputs[0];
      recountConsumers(m.main);
      return true;
    });
  });
}

TEST(ValidationMutation, MissingWriterIsRejected) {
  runOnCorpus([](MutationChecker& c, const Model& base) {
    if (base.main.operations.empty()) return;
    c.expectInvalid("last operation removed: its outputs have no writer", [&](Model& m) {
      m.main.operations.pop_back();
      recountConsumers(m.main);
      return true;
    });
  });
}

TEST(ValidationMutation, UnknownOperationCodeIsRejected) {
  runOnCorpus([](MutationChecker& c, const Model& base) {
    for (size_t op = 0; op < base.main.operations.size(); ++op) {
      for (int32_t code : {-1, 102, 9999, 10001}) {
        c.expectInvalid(fmt::format("operation {} type code {}", op, code), [&](Model& m) {
          m.main.operations[op].type = castTo<OperationType>(code);
          return true;
        });
      }
    }
  });
}

}  // namespace
}  // namespace sable::hal
