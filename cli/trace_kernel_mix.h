// The kernel mix of a simulated job taken from a real rank: a Kineto trace replayed through
// the step assembler (the importer's path), its steps handed to simulate::kernelMixFromSteps.
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"
#include "simulate/kernel_mix.h"

namespace argus::cli {

// The shared real traces' folder: $ARGUS_SHARED_DATA, else ../shared/data.
std::string sharedDataDir();

// The trace `argus simulate` takes its mix from when none is named: the A100 training
// rank of the shared traces ($ARGUS_SHARED_DATA, else ../shared/data), or "" when absent.
std::string defaultMixTrace();

// Errors name the file: unreadable, not a trace, no steps with compute kernels.
Result<simulate::KernelMix> kernelMixFromTrace(const std::string& path, size_t max_kernels);

// The mix of defaultMixTrace(), or the built-in one where that trace is absent.
Result<simulate::KernelMix> defaultKernelMix(size_t max_kernels);

}  // namespace argus::cli
