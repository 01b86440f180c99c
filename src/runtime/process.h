// Running a tool (a compiler) as a child process and collecting what it prints.
#pragma once

#include <sys/wait.h>

#include <string>
#include <vector>

namespace tilec::runtime {

struct ProcessResult {
  int status = 0;      // as waitpid reports it
  std::string output;  // stdout and stderr together
  std::string spawn_error;

  bool ok() const { return spawn_error.empty() && WIFEXITED(status) && WEXITSTATUS(status) == 0; }
  std::string describe() const {
    if (!spawn_error.empty()) return "could not start: " + spawn_error;
    if (WIFEXITED(status)) return "exit status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
    return "wait status " + std::to_string(status);
  }
};

// Runs argv[0] (searched on PATH) with stdin from /dev/null, stdout and stderr collected together.
ProcessResult run_process(const std::vector<std::string>& argv);

// Words of `text` split at blanks.
std::vector<std::string> split_words(const std::string& text);

// `words` as one shell-quoted command line, for messages.
std::string join(const std::vector<std::string>& words);

// The first `count` lines of `text`, "[...]" marking a cut.
std::string first_lines(const std::string& text, int count);

}  // namespace tilec::runtime
