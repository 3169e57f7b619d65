// Issue 41 item 8: the first error line of a failed build's log, which the
// summary and `ciq diagnose` show for a candidate that failed to compile.
#include "engine/compile/FirstError.h"

#include <gtest/gtest.h>

using namespace ciq;

TEST(FirstError, FindsEachCompilersSpelling) {
  EXPECT_EQ(firstErrorLine("[1/2] Building CUDA object k.cu.o\nFAILED: k.cu.o\n/usr/bin/ciq-ptxas nvcc -c k.cu\n"
                           "k.cu(7): error: identifier \"TILE\" is undefined\n1 error detected\n"),
            "k.cu(7): error: identifier \"TILE\" is undefined");
  EXPECT_EQ(firstErrorLine("gcc: error: unrecognized command-line option '-Xcompiler'\n"),
            "gcc: error: unrecognized command-line option '-Xcompiler'");
  EXPECT_EQ(firstErrorLine("  nvcc fatal   : Unknown option '--foo'\n"), "nvcc fatal   : Unknown option '--foo'");
  EXPECT_EQ(firstErrorLine("ptxas error   : Entry function 'k' uses too much shared data\n"),
            "ptxas error   : Entry function 'k' uses too much shared data");
  EXPECT_EQ(firstErrorLine("ciq-ptxas: error: the nvcc stand-in called itself again\n"),
            "ciq-ptxas: error: the nvcc stand-in called itself again");
  EXPECT_EQ(firstErrorLine("k.cu:7:2: error: #error \"TILE must be even\"\n"), "k.cu:7:2: error: #error \"TILE must be even\"");
  // The device link's and the host link's own lines (issue 48 item 2), not collect2's summary.
  EXPECT_EQ(firstErrorLine("nvlink error   : entry function '_Z5k_rdcPKfS0_Pfi' with max regcount of 32 calls "
                           "function '_Z5heavyPKfi' with regcount of 139\n"),
            "nvlink error   : entry function '_Z5k_rdcPKfS0_Pfi' with max regcount of 32 calls function "
            "'_Z5heavyPKfi' with regcount of 139");
  EXPECT_EQ(firstErrorLine("/usr/bin/ld: main.cpp.o: in function `main':\nmain.cpp:(.text+0x5): undefined reference "
                           "to `fast_path_init'\ncollect2: error: ld returned 1 exit status\n"),
            "main.cpp:(.text+0x5): undefined reference to `fast_path_init'");
}

TEST(FirstError, IgnoresWarningsNamesAndMakesSummary) {
  EXPECT_EQ(firstErrorLine("k.cu(3): warning: variable unused\nninja: build stopped: subcommand failed.\n"), "");
  EXPECT_EQ(firstErrorLine("FAILED: error_handling.cu.o\nmake: *** [Makefile:3: x.o] Error 1\n"), "");
  std::string longLine = "k.cu(1): error: " + std::string(1000, 'x');
  EXPECT_LT(firstErrorLine(longLine).size(), 400u);
  EXPECT_EQ(firstErrorLineOfFile("/nonexistent/ciq/log"), "");
}

// Issue 50 item 5: a build that failed in a compile is compile_error even
// when no receipt said so (a host source, a compile outside ciq-ptxas);
// a link's failure is not.
TEST(FirstError, TellsACompileFailureFromALinkFailure) {
  EXPECT_TRUE(logShowsCompileFailure("[1/3] Building CXX object CMakeFiles/app.dir/main.cpp.o\n"
                                     "FAILED: CMakeFiles/app.dir/main.cpp.o\n/usr/bin/c++ -c main.cpp\n"));
  EXPECT_TRUE(logShowsCompileFailure("make[2]: *** [CMakeFiles/app.dir/build.make:76: CMakeFiles/app.dir/k.cu.o] "
                                     "Error 1\n"));
  EXPECT_TRUE(logShowsCompileFailure("k.cu(7): error: identifier \"TILE\" is undefined\n"));
  EXPECT_TRUE(logShowsCompileFailure("main.cpp:3:1: error: expected ';'\n"));
  EXPECT_TRUE(logShowsCompileFailure("CMake Error at app_generated_k.cu.o.cmake:280 (message):\n"
                                     "make[2]: *** [CMakeFiles/app.dir/app_generated_k.cu.o] Error 1\n"));
  EXPECT_FALSE(logShowsCompileFailure("FAILED: app\n/usr/bin/ld: main.cpp.o: in function `main':\n"
                                      "main.cpp:(.text+0x5): undefined reference to `f'\n"
                                      "collect2: error: ld returned 1 exit status\n"));
  EXPECT_FALSE(logShowsCompileFailure("FAILED: CMakeFiles/app.dir/cmake_device_link.o\nnvlink error   : entry "
                                      "function '_Z1kv' with max regcount of 32 calls function '_Z1hv'\n"));
  EXPECT_FALSE(logShowsCompileFailure("make[2]: *** [app] Error 1\n"));
}
