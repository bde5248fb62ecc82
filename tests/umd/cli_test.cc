// `sable asm` / `sable disasm` as a user runs them: files, standard output, exit codes
// (0 success, 1 bad input, 2 usage).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

class SableCli : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "umd-cli-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(path(name), std::ios::binary) << text; }
  std::string read(const std::string& name) const {
    std::ifstream in(path(name), std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // Runs `sable ARGS` with standard output and error in files; returns the exit code.
  int sable(const std::string& args) const {
    const std::string command = std::string("'") + SABLE_TOOL_PATH + "' " + args + " >'" + path("stdout") + "' 2>'" +
                                path("stderr") + "'";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  fs::path dir_;
};

const char* kProgram =
    ".config s16\n"
    "DMA_LOAD elem_bytes=16 nx=4 dram_stride_x=16 signal=L2C\n"
    "LUT count=4 table_addr=100 wait=L2C signal=C2S\n"
    "DMA_STORE region=1 elem_bytes=16 nx=4 dram_stride_x=16 wait=C2S\n";

TEST_F(SableCli, umd_cli_AsmThenDisasmRoundTripsThroughFiles) {
  write("p.s", kProgram);
  ASSERT_EQ(sable("asm " + path("p.s") + " -o " + path("p.bin")), 0) << read("stderr");
  const std::string binary = read("p.bin");
  ASSERT_EQ(binary.size(), 32u + 4 * 32u) << "header, three commands and END";
  EXPECT_EQ(binary.substr(0, 4), "SBLC");

  ASSERT_EQ(sable("disasm " + path("p.bin")), 0) << read("stderr");
  const std::string text = read("stdout");
  EXPECT_NE(text.find("\nLUT input_addr=0 output_addr=0 count=4 table_addr=100 input_stride=1 output_stride=1 "
                      "wait=L2C signal=C2S\n"),
            std::string::npos)
      << text;
  ASSERT_EQ(sable("disasm " + path("p.bin") + " -o " + path("q.s")), 0) << read("stderr");
  EXPECT_EQ(read("q.s"), text) << "-o writes what standard output gets";
  ASSERT_EQ(sable("asm " + path("q.s") + " -o " + path("q.bin")), 0) << read("stderr");
  EXPECT_EQ(read("q.bin"), binary) << "asm(disasm(x)) differs from x";
}

TEST_F(SableCli, umd_cli_BadInputExitsOneWithTheCause) {
  write("bad.s", ".config s16\nDMA_LAOD nx=1\n");
  EXPECT_EQ(sable("asm " + path("bad.s") + " -o " + path("bad.bin")), 1);
  EXPECT_EQ(read("stderr"), "sable asm: " + path("bad.s") + ":2:1: unknown mnemonic 'DMA_LAOD'\n");
  EXPECT_FALSE(fs::exists(path("bad.bin"))) << "nothing is written for bad input";

  write("notastream.bin", "this is text, not a command stream");
  EXPECT_EQ(sable("disasm " + path("notastream.bin")), 1);
  EXPECT_NE(read("stderr").find("bad magic"), std::string::npos) << read("stderr");

  write("short.bin", "SBLC");
  EXPECT_EQ(sable("disasm " + path("short.bin")), 1);
  EXPECT_NE(read("stderr").find("truncated stream: 4 bytes"), std::string::npos) << read("stderr");

  EXPECT_EQ(sable("disasm " + path("missing.bin")), 1);
  EXPECT_NE(read("stderr").find("cannot read"), std::string::npos) << read("stderr");
}

TEST_F(SableCli, umd_cli_UsageErrorsExitTwo) {
  write("p.s", kProgram);
  EXPECT_EQ(sable("asm"), 2) << "no input";
  EXPECT_EQ(sable("asm " + path("p.s")), 2) << "no -o";
  EXPECT_EQ(sable("disasm"), 2) << "no input";
  EXPECT_EQ(sable("disasm " + path("p.s") + " --bogus"), 2) << "unknown option";
}

}  // namespace
