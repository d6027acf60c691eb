// gpuadmit check: the API server's view of a manifest, offline. Mutation, then validation of the result.
#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "flags.hpp"
#include "gpuadmit/admission/offline_check.hpp"
#include "gpuadmit/config/policy_loader.hpp"
#include "gpuadmit/config/yaml_documents.hpp"

namespace gpuadmit::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::string_view kCheckUsage = R"(Usage:
  gpuadmit check -f FILE|DIR|- [-f ...] [--policy FILE] [--cluster FILE] [-o text|json|yaml] [--namespace NS]

Reads Pods, PersistentVolumeClaims and workloads (Deployments, Jobs, CronJobs, Kubeflow training jobs:
the policy's spec.workloads) from YAML (multi-document, or a List) or JSON files and reports what the API
server with gpuadmit installed would do: the fixes the mutating webhook makes, then the verdict on the
fixed object. Objects of other kinds are reported as not checked.

Flags:
  -f, --filename    a file, a directory (its .yaml, .yml and .json files, recursively) or - for stdin
      --policy      a policy file (default: the embedded policy, see 'gpuadmit policy default')
      --cluster     the cluster to judge against: the output of 'kubectl get nodes,resourcequotas,
                    storageclasses,persistentvolumeclaims -A -o yaml' or of 'gpuadmit cluster dump';
                    without it the cluster-aware rules ({cluster-aware rules}) are skipped
  -o, --output      text (default, for people), json (stable, for scripts) or yaml (the fixed manifests)
  -n, --namespace   namespace for objects that name none (default: default)

Exit codes: 0 every object allowed, 1 any object denied, 2 usage, input or policy errors.
Limits: 8 MiB per input, nesting 64 deep, 1,000,000 YAML nodes after alias expansion.
)";

struct Source {
  std::string name;
  std::string text;
};

Result<std::vector<Source>> read_sources(const std::vector<std::string>& paths) {
  std::vector<Source> sources;
  const auto read_file = [&](const fs::path& path) -> Result<bool> {
    std::ifstream file(path, std::ios::binary);
    if (!file) return make_error(path.string() + ": cannot open");
    constexpr std::size_t kCap = 8 * 1024 * 1024 + 1;  // one past the limit, so the reader reports it
    std::string text(kCap, '\0');
    file.read(text.data(), static_cast<std::streamsize>(kCap));
    text.resize(static_cast<std::size_t>(file.gcount()));
    sources.push_back({path.string(), std::move(text)});
    return true;
  };
  for (const std::string& path : paths) {
    if (path == "-") {
      std::string text;
      std::array<char, 65536> chunk{};
      std::size_t n = 0;
      while ((n = std::fread(chunk.data(), 1, chunk.size(), stdin)) > 0 && text.size() <= 8 * 1024 * 1024) {
        text.append(chunk.data(), n);
      }
      sources.push_back({"<stdin>", std::move(text)});
      continue;
    }
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::recursive_directory_iterator(path, ec)) {
        const std::string ext = entry.path().extension().string();
        if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json"))
          files.push_back(entry.path());
      }
      if (ec) return make_error(path + ": " + ec.message());
      std::sort(files.begin(), files.end());
      for (const fs::path& f : files) {
        if (auto r = read_file(f); !r) return r.error();
      }
      continue;
    }
    if (!fs::exists(path, ec)) return make_error(path + ": no such file or directory");
    if (auto r = read_file(path); !r) return r.error();
  }
  return sources;
}

Result<policy::ClusterSnapshot> load_cluster(const std::string& path) {
  auto sources = read_sources({path});
  if (!sources) return sources.error();
  nlohmann::json items = nlohmann::json::array();
  for (const Source& source : *sources) {
    auto documents = config::read_documents(source.text, source.name);
    if (!documents) return documents.error();
    for (const config::Document& doc : *documents) {
      if (doc.object.is_object() && doc.object.contains("items") && doc.object["items"].is_array()) {
        for (const auto& item : doc.object["items"]) items.push_back(item);
      } else {
        items.push_back(doc.object);
      }
    }
  }
  auto snapshot = policy::snapshot_from_list({{"items", items}});
  if (!snapshot) return make_error(path + ": " + snapshot.error().message);
  return snapshot;
}

struct Located {
  admission::CheckResult result;
  std::string source;
};

std::string indent_continuation(const std::string& text, std::string_view pad) {
  std::string out;
  for (const char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

std::string verdict_text(const admission::CheckResult& r) {
  if (!r.checked) return "not checked: " + r.skipped_reason;
  if (!r.allowed) {
    return "DENIED (" + std::to_string(r.violations.size()) +
           (r.violations.size() == 1 ? " problem)" : " problems)");
  }
  if (!r.fixes.empty()) {
    return "allowed with " + std::to_string(r.fixes.size()) + (r.fixes.size() == 1 ? " fix" : " fixes");
  }
  return "allowed";
}

void print_text(const std::vector<Located>& results, std::ostream& out) {
  std::vector<std::string> skipped;
  std::size_t allowed = 0;
  std::size_t fixed = 0;
  std::size_t denied = 0;
  std::size_t not_checked = 0;
  for (const Located& item : results) {
    const admission::CheckResult& r = item.result;
    std::string kind = r.kind.empty() ? "object" : r.kind;
    std::transform(kind.begin(), kind.end(), kind.begin(), [](unsigned char c) { return std::tolower(c); });
    out << kind << " " << r.namespace_ << "/" << r.name << " (" << item.source << "): " << verdict_text(r)
        << "\n";
    for (const policy::Fix& f : r.fixes) out << "  fixed    [" << f.rule << "] " << f.description << "\n";
    for (const std::string& w : r.warnings) out << "  warning  " << w << "\n";
    for (const policy::Finding& a : r.audits) out << "  audit    " << a.summary << "\n";
    if (!r.controller.empty())
      out << "  note     warnings are left to its controller " << r.controller << "\n";
    for (const policy::Finding& v : r.violations) {
      out << "  denied   [" << v.rule << "] " << v.field << "\n           "
          << indent_continuation(v.message, "           ") << "\n";
    }
    for (const std::string& rule : r.skipped_rules) {
      if (std::find(skipped.begin(), skipped.end(), rule) == skipped.end()) skipped.push_back(rule);
    }
    if (!r.checked) {
      ++not_checked;
    } else if (!r.allowed) {
      ++denied;
    } else if (!r.fixes.empty()) {
      ++fixed;
    } else {
      ++allowed;
    }
  }
  out << "\n"
      << results.size() << (results.size() == 1 ? " object: " : " objects: ") << allowed << " allowed, "
      << fixed << " allowed with fixes, " << denied << " denied, " << not_checked << " not checked\n";
  if (!skipped.empty()) {
    out << "cluster-aware rules skipped (no --cluster given):";
    for (const std::string& rule : skipped) out << " " << rule;
    out << "\n";
  }
}

json to_json(const std::vector<Located>& results) {
  json list = json::array();
  for (const Located& item : results) {
    const admission::CheckResult& r = item.result;
    json violations = json::array();
    for (const policy::Finding& v : r.violations) {
      violations.push_back({{"rule", v.rule}, {"field", v.field}, {"message", v.message}});
    }
    json fixes = json::array();
    for (const policy::Fix& f : r.fixes)
      fixes.push_back({{"rule", f.rule}, {"field", f.field}, {"description", f.description}});
    list.push_back({{"kind", r.kind},
                    {"namespace", r.namespace_},
                    {"name", r.name},
                    {"source", item.source},
                    {"checked", r.checked},
                    {"allowed", r.allowed},
                    {"violations", violations},
                    {"warnings", r.warnings},
                    {"fixes", fixes},
                    {"patch", r.patch}});
    if (!r.checked) list.back()["skippedReason"] = r.skipped_reason;
    if (!r.skipped_rules.empty()) list.back()["skippedRules"] = r.skipped_rules;
    if (!r.controller.empty()) list.back()["controller"] = r.controller;
  }
  return {{"results", list}};
}

constexpr Command kCheck{"gpuadmit check", kCheckUsage};

struct CheckOptions {
  std::vector<std::string> files;
  std::string output;
  std::string default_namespace;
  std::optional<std::string> policy_path;
  std::optional<std::string> cluster_path;
};

std::optional<CheckOptions> check_options(Args args, int& exit_code) {
  const auto flags = command_flags(args,
                                   {{"filename", "f"},
                                    {"policy", ""},
                                    {"cluster", ""},
                                    {"output", "o"},
                                    {"namespace", "n"},
                                    {"help", "h", false}},
                                   kCheck, exit_code);
  if (!flags) return std::nullopt;
  CheckOptions options{flags->all("filename"), flags->last("output").value_or("text"),
                       flags->last("namespace").value_or("default"), flags->last("policy"),
                       flags->last("cluster")};
  if (options.files.empty() || !flags->positional.empty()) {
    exit_code = usage_error(kCheck, options.files.empty() ? "give at least one -f FILE|DIR|-"
                                                          : "unexpected argument (use -f FILE)");
    return std::nullopt;
  }
  if (options.output != "text" && options.output != "json" && options.output != "yaml") {
    exit_code = command_error(kCheck, "--output must be text, json or yaml, not \"" + options.output + "\"");
    return std::nullopt;
  }
  return options;
}

// --policy's rules, or the embedded policy's without it.
Result<policy::RuleSet> load_rules(const std::optional<std::string>& policy_path) {
  if (!policy_path) return config::default_rule_set();
  auto loaded = config::load_policy_file(*policy_path);
  if (!loaded) return make_error("invalid policy:\n" + loaded.error().message);
  return loaded;
}

// --cluster's snapshot as the policy sees it; without it, a view with no snapshot.
Result<policy::ClusterView> load_view(const std::optional<std::string>& cluster_path) {
  policy::ClusterView view;
  if (!cluster_path) return view;
  auto loaded = load_cluster(*cluster_path);
  if (!loaded) return loaded.error();
  view.snapshot = std::make_shared<const policy::ClusterSnapshot>(std::move(*loaded));
  return view;
}

// An object of a document and where it is in it (a JSON Pointer: "" for the document, "/items/3").
struct DocumentObject {
  const json* object;
  std::string pointer;
};

// The objects of a document: a List's items (kubectl accepts a List in one document; so do we), else the
// document itself.
std::vector<DocumentObject> objects_of(const json& document) {
  std::vector<DocumentObject> objects;
  if (document.is_object() && document.value("kind", std::string()) == "List" && document.contains("items") &&
      document["items"].is_array()) {
    const json& items = document["items"];
    for (std::size_t i = 0; i < items.size(); ++i)
      objects.push_back({&items[i], "/items/" + std::to_string(i)});
  } else {
    objects.push_back({&document, ""});
  }
  return objects;
}

// "file:line" of an object; "file:line:column" of the field an error is about, when it names one.
std::string location(const Source& source, const config::Document& doc, const std::string& pointer,
                     bool with_column) {
  const config::Mark mark = config::mark_of(doc, pointer);
  return source.name + ":" + std::to_string(mark.line) +
         (with_column ? ":" + std::to_string(mark.column) : "");
}

// Every object of every source, checked in order; the first that cannot be read or checked is the error.
Result<std::vector<Located>> check_sources(const std::vector<Source>& sources, const policy::RuleSet& rules,
                                           const std::string& default_namespace,
                                           const policy::ClusterView* view) {
  std::vector<Located> results;
  for (const Source& source : sources) {
    auto documents = config::read_documents(source.text, source.name);
    if (!documents) return documents.error();
    for (const config::Document& doc : *documents) {
      for (const DocumentObject& item : objects_of(doc.object)) {
        auto checked = admission::check_object(*item.object, rules, default_namespace, view);
        if (!checked) {
          const Error& e = checked.error();
          return make_error(location(source, doc, item.pointer + e.pointer, !e.pointer.empty()) + ": " +
                            e.message);
        }
        results.push_back({std::move(*checked), location(source, doc, item.pointer, false)});
      }
    }
  }
  return results;
}

void print_results(const std::vector<Located>& results, std::string_view output) {
  if (output == "json") {
    std::cout << to_json(results).dump(2) << "\n";
  } else if (output == "yaml") {
    for (std::size_t i = 0; i < results.size(); ++i) {
      std::cout << (i > 0 ? "---\n" : "") << config::to_yaml(results[i].result.fixed);
    }
  } else {
    print_text(results, std::cout);
  }
}

}  // namespace

int check_command(Args args) {
  int exit_code = kExitOk;
  const auto options = check_options(args, exit_code);
  if (!options) return exit_code;
  const auto rules = load_rules(options->policy_path);
  if (!rules) return command_error(kCheck, rules.error().message);
  const auto cluster = load_view(options->cluster_path);
  if (!cluster) return command_error(kCheck, cluster.error().message);
  const policy::ClusterView* view = cluster->snapshot ? &*cluster : nullptr;
  const auto sources = read_sources(options->files);
  if (!sources) return command_error(kCheck, sources.error().message);
  const auto results = check_sources(*sources, *rules, options->default_namespace, view);
  if (!results) return command_error(kCheck, results.error().message);
  print_results(*results, options->output);
  const bool any_denied =
      std::any_of(results->begin(), results->end(), [](const Located& l) { return !l.result.allowed; });
  return any_denied ? kExitDenied : kExitOk;
}

}  // namespace gpuadmit::cli
