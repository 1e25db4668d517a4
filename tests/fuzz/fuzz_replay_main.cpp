// A main() for the fuzz targets when the compiler has no libFuzzer (g++): runs
// LLVMFuzzerTestOneInput once on each file named, or on every file in each directory
// named, so the seed corpora replay as regression tests in any build (docs/fuzzing.md).
// libFuzzer-style flags ("-runs=0") are ignored.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void runFile(const std::filesystem::path& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  size_t runs = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (!arg.empty() && arg[0] == '-') continue;
    std::filesystem::path p(arg);
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(p)) {
        if (e.is_regular_file()) {
          runFile(e.path());
          ++runs;
        }
      }
    } else if (std::filesystem::exists(p)) {
      runFile(p);
      ++runs;
    } else {
      std::fprintf(stderr, "fuzz replay: no such file or directory: %s\n", arg.c_str());
      return 1;
    }
  }
  std::printf("fuzz replay: %zu inputs ran\n", runs);
  return 0;
}
