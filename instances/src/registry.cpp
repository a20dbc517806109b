#include "tiledispatch/runtime/registry.hpp"

#include <set>
#include <utility>

namespace tiledispatch {

void Registry::register_set(InstanceList set) {
  std::set<std::string, std::less<>> incoming;
  for (const auto& instance : set) {
    if (!instance) throw RegistryError("register_set: null instance");
    if (!incoming.emplace(instance->name()).second) {
      throw RegistryError("register_set: name repeated within the set: " + std::string(instance->name()));
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& name : incoming) {
    if (instances_.count(name) != 0) throw RegistryError("register_set: name already registered: " + name);
  }
  for (auto& instance : set) {
    std::string name(instance->name());
    instances_.emplace(std::move(name), std::move(instance));
  }
}

const GroupedConvInstance* Registry::find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = instances_.find(name);
  return it == instances_.end() ? nullptr : it->second.get();
}

std::vector<const GroupedConvInstance*> Registry::filter(
    const std::function<bool(const GroupedConvInstance&)>& predicate) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<const GroupedConvInstance*> out;
  for (const auto& [name, instance] : instances_) {
    if (predicate(*instance)) out.push_back(instance.get());
  }
  return out;
}

std::vector<const GroupedConvInstance*> Registry::list() const {
  return filter([](const GroupedConvInstance&) { return true; });
}

size_t Registry::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return instances_.size();
}

}  // namespace tiledispatch
