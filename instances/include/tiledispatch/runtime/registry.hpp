// Thread-safe store of kernel instances, keyed by name.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tiledispatch/runtime/instance.hpp"

namespace tiledispatch {

class RegistryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Adds every instance of `set` or none of them: a name repeated within the set or already registered
  // rejects the whole set with RegistryError (one tie-break everywhere: names are unique, first set wins).
  void register_set(InstanceList set);

  [[nodiscard]] const GroupedConvInstance* find(std::string_view name) const;
  // Instances for which `predicate` holds, ordered by name.
  [[nodiscard]] std::vector<const GroupedConvInstance*> filter(
      const std::function<bool(const GroupedConvInstance&)>& predicate) const;
  // Every instance, ordered by name.
  [[nodiscard]] std::vector<const GroupedConvInstance*> list() const;
  [[nodiscard]] size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<GroupedConvInstance>, std::less<>> instances_;
};

}  // namespace tiledispatch
