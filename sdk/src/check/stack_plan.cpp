#include "stack_plan.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <utility>

#include "binary/zip_archive.hpp"
#include "sys/utf8_path.hpp"

namespace archfit::check {

namespace fs = std::filesystem;

namespace {

// A member of a --wheel ("x.whl!/pkg/lib.so") belongs to that wheel's
// distribution; an empty name when the file is not in a wheel.
env::Component wheel_component(const std::vector<env::Wheel>& wheels, const std::string& path) {
  for (const auto& wheel : wheels) {
    const std::string prefix = wheel.path.string() + std::string(binary::kMemberSeparator);
    if (path.starts_with(prefix))
      return {env::ComponentKind::distribution, wheel.name, wheel.version, wheel.path};
  }
  return {};
}

bool loadable(const binary::FileScan& file) {
  return file.linkage.has_value() || file.has_device_code();
}

// One unit being planned: its members' keys and where its roots come from.
struct Draft {
  StackPlan plan;
  std::set<std::string> owners;  // owner keys whose files are roots: "kind:name:root"
};

std::string owner_key(const env::Component& owner) {
  return std::string(env::to_string(owner.kind)) + ":" + owner.name + ":" + owner.root.string();
}

}  // namespace

FileOwners attribute_files(const std::vector<binary::FileScan>& files,
                           const std::vector<env::SitePackages>& sites,
                           const std::vector<env::Wheel>& wheels,
                           const std::optional<fs::path>& custom_nodes) {
  FileOwners owners;
  owners.owner.resize(files.size());
  owners.site.resize(files.size(), nullptr);
  for (size_t i = 0; i < files.size(); ++i) {
    if (!loadable(files[i])) continue;
    const std::string& path = files[i].path;
    if (auto component = wheel_component(wheels, path); !component.name.empty()) {
      owners.owner[i] = std::move(component);
      continue;
    }
    // The first site-packages whose RECORD lists it, else its pack or itself.
    // The scan's paths are UTF-8: a path again through sys/, never
    // fs::path(std::string), which Windows reads in the ANSI code page.
    const fs::path file = sys::path_of_utf8(path);
    env::Component component = env::attribute(file, nullptr, custom_nodes);
    for (const auto& site : sites) {
      auto candidate = env::attribute(file, &site, custom_nodes);
      if (candidate.kind == env::ComponentKind::distribution) {
        component = std::move(candidate);
        owners.site[i] = &site;
        break;
      }
    }
    owners.owner[i] = std::move(component);
  }
  return owners;
}

std::vector<std::string> required_suppliers(const env::SitePackages& site,
                                            const std::vector<std::string>& roots,
                                            const kb::Packages& packages) {
  std::vector<std::string> found;
  std::set<std::pair<std::string, std::string>> seen;  // (distribution, extra asked of it)
  std::deque<std::pair<const env::Distribution*, std::vector<std::string>>> queue;
  for (const auto& name : roots) {
    if (const auto* dist = site.find(name)) queue.push_back({dist, {}});
  }
  while (!queue.empty()) {
    auto [dist, extras] = std::move(queue.front());
    queue.pop_front();
    for (const auto& requirement : dist->requirements) {
      if (!requirement.when_extra.empty() &&
          std::find(extras.begin(), extras.end(), requirement.when_extra) == extras.end())
        continue;
      const auto* target = site.find(requirement.name);
      if (!target || !packages.supplier(target->key)) continue;
      bool fresh = false;
      for (const auto& extra : requirement.extras)
        fresh |= seen.insert({target->key, extra}).second;
      fresh |= seen.insert({target->key, ""}).second;
      if (!fresh) continue;
      if (std::find(found.begin(), found.end(), target->key) == found.end())
        found.push_back(target->key);
      queue.push_back({target, requirement.extras});
    }
  }
  return found;
}

std::vector<StackPlan> plan_stacks(const std::vector<binary::FileScan>& files,
                                   const FileOwners& owners,
                                   const std::vector<env::SitePackages>& sites,
                                   const kb::Packages& packages,
                                   const std::vector<bool>& excluded) {
  std::vector<Draft> drafts;
  std::set<std::string> planned;  // owner keys already in a unit

  // Distributions with something loadable, per site, in name order.
  std::map<const env::SitePackages*, std::set<std::string>> loadable_dists;
  for (size_t i = 0; i < files.size(); ++i) {
    if (owners.site[i]) loadable_dists[owners.site[i]].insert(owners.owner[i].name);
  }

  for (const auto& site : sites) {
    const auto dist_key = [&](const env::Distribution& dist) {
      return owner_key({env::ComponentKind::distribution, dist.name, dist.version, dist.dist_info});
    };
    const auto add_unit = [&](const std::string& name, const env::Distribution& anchor,
                              const std::vector<std::string>& member_keys) {
      Draft draft;
      draft.plan.name = name;
      draft.plan.anchor = anchor.name;
      draft.plan.version = anchor.version;
      draft.plan.site = &site;
      for (const auto& key : member_keys) {
        const auto* dist = site.find(key);
        if (!dist) continue;
        draft.plan.members.push_back(dist->name);
        // Supplier wheels are members, never roots.
        if (!packages.supplier(dist->key)) draft.owners.insert(dist_key(*dist));
        planned.insert(dist_key(*dist));
      }
      drafts.push_back(std::move(draft));
    };
    // The stacks packages.yaml names, where their anchor is installed.
    for (const auto& rule : packages.stacks) {
      const auto* anchor = site.find(rule.anchor);
      if (!anchor) continue;
      std::vector<std::string> keys = {anchor->key};
      for (const auto& member : rule.members) {
        if (site.find(member)) keys.push_back(member);
      }
      for (const auto& supplier : required_suppliers(site, keys, packages))
        keys.push_back(supplier);
      add_unit(rule.name, *anchor, keys);
    }
    // Every other distribution with a binary, with the suppliers it requires.
    const auto dists = loadable_dists.find(&site);
    if (dists == loadable_dists.end()) continue;
    for (const auto& name : dists->second) {
      const auto* dist = site.find(name);
      if (!dist || packages.supplier(dist->key) || planned.count(dist_key(*dist))) continue;
      std::vector<std::string> keys = {dist->key};
      for (const auto& supplier : required_suppliers(site, keys, packages))
        keys.push_back(supplier);
      add_unit(dist->name, *dist, keys);
    }
  }

  // Packs, libraries named alone and --wheel files: one unit each.
  std::map<std::string, size_t> other_units;
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& owner = owners.owner[i];
    if (owner.name.empty() || owners.site[i]) continue;
    const std::string key = owner_key(owner);
    if (planned.count(key) || other_units.count(key)) continue;
    Draft draft;
    draft.plan.name = owner.name;
    draft.plan.kind = owner.kind;
    if (owner.kind == env::ComponentKind::distribution) {  // a --wheel
      draft.plan.anchor = owner.name;
      draft.plan.version = owner.version;
    }
    draft.plan.members = {owner.name};
    draft.owners.insert(key);
    other_units.emplace(key, drafts.size());
    drafts.push_back(std::move(draft));
  }

  // Roots: every loadable file of a unit's own (non-supplier) members.
  std::map<std::string, std::vector<size_t>> unit_of_owner;
  for (size_t u = 0; u < drafts.size(); ++u) {
    for (const auto& key : drafts[u].owners) unit_of_owner[key].push_back(u);
  }
  for (size_t i = 0; i < files.size(); ++i) {
    if (owners.owner[i].name.empty() || (i < excluded.size() && excluded[i])) continue;
    const auto units = unit_of_owner.find(owner_key(owners.owner[i]));
    if (units == unit_of_owner.end()) continue;
    for (const size_t u : units->second) drafts[u].plan.roots.push_back(i);
  }
  std::vector<StackPlan> plans;
  for (auto& draft : drafts) plans.push_back(std::move(draft.plan));
  return plans;
}

}  // namespace archfit::check
