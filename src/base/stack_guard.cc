#include "base/stack_guard.h"

#include <pthread.h>

#include <cstdint>
#include <string>

namespace tilec {
namespace {

struct ThreadStack {
  uintptr_t low = 0;  // the lowest address of the stack (it grows down); 0 when unknown
  size_t size = 0;
};

ThreadStack find_thread_stack() {
  ThreadStack stack;
#if defined(__linux__)
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return stack;
  void* low = nullptr;
  size_t size = 0;
  if (pthread_attr_getstack(&attr, &low, &size) == 0) {
    stack.low = reinterpret_cast<uintptr_t>(low);
    stack.size = size;
  }
  pthread_attr_destroy(&attr);
#elif defined(__APPLE__)
  uintptr_t high = reinterpret_cast<uintptr_t>(pthread_get_stackaddr_np(pthread_self()));
  stack.size = pthread_get_stacksize_np(pthread_self());
  stack.low = high - stack.size;
#endif
  return stack;
}

const ThreadStack& thread_stack() {
  thread_local const ThreadStack stack = find_thread_stack();
  return stack;
}

}  // namespace

size_t stack_left() {
  const ThreadStack& stack = thread_stack();
  uintptr_t here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  if (stack.low == 0 || here < stack.low) return 0;
  return here - stack.low;
}

void check_stack(const SourceLoc& loc) {
  const ThreadStack& stack = thread_stack();
  if (stack.low == 0) return;
  size_t left = stack_left();
  if (left >= kStackReserve) return;
  std::string message = "this kernel nests too deeply for the stack of the thread compiling it (" +
                        std::to_string(stack.size >> 10) + " KiB, less than " +
                        std::to_string(kStackReserve >> 10) +
                        " KiB left here); compile it on a thread with a larger stack (threads "
                        "get 8 MiB by default on Linux)";
  error_at(loc, message);
}

}  // namespace tilec
