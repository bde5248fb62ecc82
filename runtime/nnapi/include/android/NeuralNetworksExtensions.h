/*
 * NNAPI vendor extensions (feature level 3, Android 10, NN HAL 1.2), as Sable's
 * libneuralnetworks.so implements them on Linux (docs/nnapi.md, "Extensions").
 *
 * Written for Sable from the public NNAPI reference documentation: the names and signatures are
 * NNAPI's, so that an application using a vendor extension compiles unchanged. An extension's
 * operand and operation types are 32-bit codes whose high bits are a prefix the library assigns to
 * the extension's name (the same prefix for a name throughout the process) and whose low 16 bits
 * are the type within the extension. The extensions the devices support are listed by
 * ANeuralNetworksDevice_getExtensionSupport; Sable's own is "com.sable.tflite" (docs/extensions.md).
 */
#ifndef SABLE_ANDROID_NEURAL_NETWORKS_EXTENSIONS_H
#define SABLE_ANDROID_NEURAL_NETWORKS_EXTENSIONS_H

#include "android/NeuralNetworks.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether `device` supports the extension named `extensionName`. */
int ANeuralNetworksDevice_getExtensionSupport(const ANeuralNetworksDevice* device, const char* extensionName,
                                              bool* isExtensionSupported);

/* The operand type code of type `operandCodeWithinExtension` of the extension, for operands of
 * `model`. BAD_DATA when no device supports the extension or it declares no such operand type. */
int ANeuralNetworksModel_getExtensionOperandType(ANeuralNetworksModel* model, const char* extensionName,
                                                 uint16_t operandCodeWithinExtension, int32_t* type);

/* The operation type code of operation `operationCodeWithinExtension` of the extension, for
 * ANeuralNetworksModel_addOperation on `model`. BAD_DATA when no device supports the extension;
 * whether the extension has such an operation, and its signature, are checked when the operation
 * is added and when the model is finished. */
int ANeuralNetworksModel_getExtensionOperationType(ANeuralNetworksModel* model, const char* extensionName,
                                                   uint16_t operationCodeWithinExtension,
                                                   ANeuralNetworksOperationType* type);

/* The value of an operand of an extension operand type (opaque bytes the extension defines). */
int ANeuralNetworksModel_setOperandExtensionData(ANeuralNetworksModel* model, int32_t index, const void* data,
                                                 size_t length);

#ifdef __cplusplus
}
#endif

#endif /* SABLE_ANDROID_NEURAL_NETWORKS_EXTENSIONS_H */
