#include "cli/trace_kernel_mix.h"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "import/kineto_reader.h"
#include "import/trace_replay.h"

namespace argus::cli {

std::string sharedDataDir() {
  const char* env = std::getenv("ARGUS_SHARED_DATA");
  return env != nullptr && *env != '\0' ? env : "../shared/data";
}

std::string defaultMixTrace() {
  const std::string path = sharedDataDir() + "/kineto/single-rank/a100-8rank-rank3.json.gz";
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) ? path : std::string();
}

Result<simulate::KernelMix> kernelMixFromTrace(const std::string& path, size_t max_kernels) {
  Result<import::KinetoTrace> trace = import::readKinetoTrace(path);
  if (!trace.isOk()) return trace.status();
  std::vector<model::StepRecord> steps;
  std::vector<model::KernelDictEntry> names;
  import::replayTrace(trace->names, trace->events, import::importAssemblerOptions(0), [&](const capture::StepOutput& out) {
    steps.push_back(out.record);
    names.insert(names.end(), out.new_kernels.begin(), out.new_kernels.end());
  });
  return simulate::kernelMixFromSteps(steps, names, max_kernels, path);
}

Result<simulate::KernelMix> defaultKernelMix(size_t max_kernels) {
  const std::string trace = defaultMixTrace();
  if (trace.empty()) return simulate::builtinKernelMix(max_kernels);
  return kernelMixFromTrace(trace, max_kernels);
}

}  // namespace argus::cli
