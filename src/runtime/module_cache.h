// The in-memory cache of built modules (CPU libraries, CUDA cubins): one build
// per key even when threads ask at once; a failed build is not remembered.
#pragma once

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tilec::runtime {

template <typename Module>
class ModuleCache {
 public:
  // The module of `key`: from memory, or from `build` (run by the first caller
  // while later callers wait for it). `from_memory` says which.
  std::shared_ptr<Module> get(const std::string& key,
                              const std::function<std::shared_ptr<Module>()>& build,
                              bool* from_memory) {
    std::promise<std::shared_ptr<Module>> promise;
    std::shared_future<std::shared_ptr<Module>> pending;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = modules_.find(key);
      if (it != modules_.end()) pending = it->second;
      else modules_.emplace(key, promise.get_future().share());
    }
    *from_memory = pending.valid();
    if (pending.valid()) return pending.get();
    try {
      std::shared_ptr<Module> module = build();
      promise.set_value(module);
      return module;
    } catch (...) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        modules_.erase(key);
      }
      promise.set_exception(std::current_exception());
      throw;
    }
  }

  // Forgets the modules built so far (for tests); builds in progress are kept.
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = modules_.begin(); it != modules_.end();) {
      bool ready = it->second.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
      it = ready ? modules_.erase(it) : std::next(it);
    }
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<Module>>> modules_;
};

}  // namespace tilec::runtime
