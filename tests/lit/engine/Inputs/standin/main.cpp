// The stand-in benchmark (see CMakeLists.txt): prints time_ms=<value>.
// argv[1]: a file it appends one line to per run (the noise seed).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

extern "C" int hb_block();

// The largest register count ptxas recorded in the cubins embedded in this
// executable (.nv.info attribute EIATTR_REGCOUNT: 04 2f 08 00, symbol, count).
static unsigned maxRegisters(const std::string &self) {
  const std::string tag("\x04\x2f\x08\x00", 4);
  unsigned most = 0;
  for (size_t at = self.find(tag); at != std::string::npos && at + 12 <= self.size(); at = self.find(tag, at + 1)) {
    uint32_t regs;
    std::memcpy(&regs, self.data() + at + 8, 4);
    if (regs > most && regs <= 255)
      most = regs;
  }
  return most;
}

int main(int argc, char **argv) {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  std::string self((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  unsigned seed = 0;
  if (argc > 1) {
    std::ifstream counter(argv[1]);
    for (std::string l; std::getline(counter, l);)
      ++seed;
    std::ofstream(argv[1], std::ios::app) << "run\n";
  }
  double t = 10.0;
  if (hb_block() == 256)
    t -= 1.0;
  if (maxRegisters(self) <= 40)
    t -= 0.3;
  // The search runs ./app in the build tree; re-measurements run copies by
  // their absolute path.
  bool searchRun = argv[0][0] != '/';
  // The option as ptxas records it in the cubin; spelt backwards here, or
  // this program's own copy of the text would always match.
  std::string option = "gc=ehcac-daol-fed--";
  option.assign(option.rbegin(), option.rend());
  if (searchRun && self.find(option) != std::string::npos)
    t -= 0.1;
  // STANDIN_SEED shifts the noise's seed; STANDIN_JITTER_PERCENT=P adds
  // uniform jitter of +-P% (bench/adaptive_gpu.sh: issue 21's noisy stand-in).
  if (const char *v = std::getenv("STANDIN_SEED"))
    seed += 1000003u * (unsigned)std::atoi(v);
  std::mt19937 gen(seed);
  t += std::normal_distribution<double>(0, 0.01)(gen);
  if (const char *v = std::getenv("STANDIN_JITTER_PERCENT"))
    t *= 1 + std::uniform_real_distribution<double>(-1, 1)(gen) * std::atof(v) / 100;
  std::printf("time_ms=%.5f (registers %u)\n", t, maxRegisters(self));
  return 0;
}
