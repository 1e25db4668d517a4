// The injection library of nvtx_injection_test: what the capture shim will do, in small.
// NVTX calls InitializeInjectionNvtx2 on the program's first NVTX call; we install the
// Argus handlers and attach a Drain, and at exit drain once and write every event (and the
// thread names and counters) as text to the file named by ARGUS_NVTX_TEST_OUT:
//   event <begin|end|range|mark> <thread> <start_ns> <end_ns> <id> <name>
//   thread <tid> <name>
//   stat <counter> <value>
#define NVTX_NO_IMPL
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "capture/name_table.h"
#include "capture/nvtx/nvtx_drain.h"
#include "capture/nvtx/nvtx_injection.h"

namespace {

using namespace argus::capture;

struct Collector {
  NameTable names;
  nvtx::Drain drain{nvtx::Recorder::instance(), names};

  ~Collector() {
    const char* path = std::getenv("ARGUS_NVTX_TEST_OUT");
    if (path == nullptr) return;
    std::FILE* f = std::fopen(path, "w");
    if (f == nullptr) return;
    for (const TraceEvent& e : drain.drain()) {
      const char* type = e.type == EventType::kRangeBegin ? "begin"
                         : e.type == EventType::kRangeEnd ? "end"
                         : e.type == EventType::kRange    ? "range"
                                                          : "mark";
      std::string_view name = names.text(e.name);
      std::fprintf(f, "event %s %u %lld %lld %llu %.*s\n", type, e.thread, static_cast<long long>(e.start_ns),
                   static_cast<long long>(e.end_ns), static_cast<unsigned long long>(e.id), static_cast<int>(name.size()), name.data());
    }
    for (const auto& [tid, name] : drain.threadNames()) std::fprintf(f, "thread %u %s\n", tid, name.c_str());
    nvtx::NvtxStats s = drain.stats();
    std::fprintf(f, "stat dropped %llu\nstat unmatched_pops %llu\nstat unknown_names %llu\nstat records %llu\n",
                 static_cast<unsigned long long>(s.dropped), static_cast<unsigned long long>(s.unmatched_pops),
                 static_cast<unsigned long long>(s.unknown_names), static_cast<unsigned long long>(s.records));
    std::fclose(f);
  }
};

// Destroyed at exit (after main returns and the program's threads are joined).
std::unique_ptr<Collector> g_collector;

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable) {
  if (!g_collector) g_collector = std::make_unique<Collector>();
  return nvtx::initializeInjection(getExportTable);
}
