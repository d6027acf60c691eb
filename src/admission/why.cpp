#include "gpuadmit/admission/why.hpp"

#include <algorithm>

#include "gpuadmit/admission/offline_check.hpp"
#include "gpuadmit/k8s/json_paths.hpp"

namespace gpuadmit::admission {
namespace {

using k8s::text_at;
using nlohmann::json;

std::string lowercase(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// A rule's message splits into what is wrong and its "Fix:" part.
std::pair<std::string, std::string> split_fix(const std::string& message) {
  const auto at = message.find("\nFix:");
  if (at == std::string::npos) return {message, ""};
  std::string fix = message.substr(at + 5);
  if (!fix.empty() && fix.front() == ' ') fix.erase(0, 1);
  if (!fix.empty() && fix.front() == '\n') fix.erase(0, 1);
  return {message.substr(0, at), fix};
}

// The events about an object (by kind and name), in the order given (the API lists them oldest first).
std::vector<const json*> events_about(const std::vector<json>& events, const std::string& kind,
                                      const std::string& name) {
  std::vector<const json*> out;
  for (const json& e : events) {
    if (text_at(e, {"involvedObject", "kind"}) == kind && text_at(e, {"involvedObject", "name"}) == name)
      out.push_back(&e);
  }
  return out;
}

bool controlled_by(const json& object, const std::string& uid) {
  return !uid.empty() && k8s::controller_uid(object) == uid;
}

// Causes from what admission would say of the object now: its denials, and the fixes and warnings of the
// rules in `rules` (those that bear on this symptom).
void from_rules(const CheckResult& checked, const std::vector<std::string_view>& rules,
                const std::string& title, Diagnosis& out) {
  const auto wanted = [&](const std::string& rule) {
    return std::find(rules.begin(), rules.end(), rule) != rules.end();
  };
  for (const policy::Finding& v : checked.violations) {
    if (!wanted(v.rule)) continue;
    auto [why, fix] = split_fix(v.message);
    out.causes.push_back({title, "", why, fix, v.rule + " (would have denied it at admission)"});
  }
  // A rule's fixes are one cause: guaranteed-qos raising cpu and memory is one reason, not two.
  for (std::size_t i = 0; i < checked.fixes.size();) {
    const std::string& rule = checked.fixes[i].rule;
    std::string changes;
    for (; i < checked.fixes.size() && checked.fixes[i].rule == rule; ++i) {
      changes += (changes.empty() ? "" : "\n") + checked.fixes[i].description;
    }
    if (!wanted(rule)) continue;
    out.causes.push_back({title, "", "", changes,
                          rule +
                              " (fixes it at admission: create the object again with gpuadmit installed, or "
                              "make the change yourself)"});
  }
  for (const policy::Finding& w : checked.warn_findings) {
    if (!wanted(w.rule)) continue;
    auto [why, fix] = split_fix(w.message);
    out.causes.push_back({title, "", why, fix, w.rule + " (warns at admission)"});
  }
}

// The rules that bear on where a pod can run.
const std::vector<std::string_view>& scheduling_rules() {
  static const std::vector<std::string_view> rules{
      "node-fit",        "gpu-tolerations",          "node-affinity", "gpu-type",
      "gpu-whole-units", "gpu-limit-equals-request", "checkpoint-pvc"};
  return rules;
}

// A workload's template also answers to the quota (an existing pod is already counted in it).
const std::vector<std::string_view>& template_rules() {
  static const std::vector<std::string_view> rules = [] {
    std::vector<std::string_view> r = scheduling_rules();
    r.emplace_back("gpu-quota");
    return r;
  }();
  return rules;
}

void not_scheduled(const json& pod, const WhyInput& input, const CheckResult& checked, Diagnosis& out) {
  std::string quote;
  bool pending_unscheduled = false;
  const json* conditions =
      pod.contains("status") && pod["status"].is_object() && pod["status"].contains("conditions")
          ? &pod["status"]["conditions"]
          : nullptr;
  if (conditions != nullptr && conditions->is_array()) {
    for (const json& c : *conditions) {
      if (text_at(c, {"type"}) == "PodScheduled" && text_at(c, {"status"}) == "False") {
        pending_unscheduled = true;
        quote = text_at(c, {"message"});
      }
    }
  }
  for (const json* e : events_about(input.events, "Pod", text_at(pod, {"metadata", "name"}))) {
    if (text_at(*e, {"reason"}) == "FailedScheduling") {
      pending_unscheduled = true;
      quote = text_at(*e, {"message"});
    }
  }
  const bool bound = !text_at(pod, {"spec", "nodeName"}).empty();
  if (bound || (!pending_unscheduled && text_at(pod, {"status", "phase"}) != "Pending")) return;
  const std::size_t before = out.causes.size();
  from_rules(checked, scheduling_rules(), "not scheduled", out);
  if (out.causes.size() == before) {
    out.causes.push_back({"not scheduled", "",
                          "no gpuadmit rule explains it on this cluster's nodes and quotas",
                          "read the scheduler's message above", ""});
  }
  out.causes[before].quote = quote;
}

void evicted(const json& pod, const CheckResult& checked, Diagnosis& out) {
  const std::string qos = text_at(pod, {"status", "qosClass"});
  const std::size_t before = out.causes.size();
  from_rules(checked, {"guaranteed-qos"}, "evicted", out);
  if (out.causes.size() == before) out.causes.push_back({"evicted", "", "", "", ""});
  out.causes[before].quote = text_at(pod, {"status", "message"});
  if (qos != "Guaranteed") {
    out.causes[before].explanation =
        "a " + (qos.empty() ? std::string("Burstable") : qos) +
        " pod is evicted first when its node runs short of memory; a Guaranteed one (every request equal to "
        "its limit) is evicted last";
  }
}

// A container killed: OOMKilled is the kernel's OOM killer; exit code 137 alone is any SIGKILL (the OOM
// killer of a child process, a failed liveness probe, a preemption).
void killed(const json& pod, const CheckResult& checked, Diagnosis& out) {
  // An evicted pod's containers end as ContainerStatusUnknown with exit code 137: the eviction is the cause.
  if (text_at(pod, {"status", "reason"}) == "Evicted") {
    evicted(pod, checked, out);
    return;
  }
  const json* statuses = nullptr;
  if (pod.contains("status") && pod["status"].is_object() && pod["status"].contains("containerStatuses"))
    statuses = &pod["status"]["containerStatuses"];
  for (const json& s : statuses != nullptr && statuses->is_array() ? *statuses : json::array()) {
    for (const char* state : {"state", "lastState"}) {
      const std::string reason = text_at(s, {state, "terminated", "reason"});
      const json exit =
          s.value(json::json_pointer(std::string("/") + state + "/terminated/exitCode"), json());
      const bool sigkill = exit.is_number_integer() && exit.get<std::int64_t>() == 137;
      if (reason != "OOMKilled" && !(sigkill && reason != "ContainerStatusUnknown")) continue;
      const std::string title = reason == "OOMKilled" ? "OOMKilled" : "killed (exit code 137, SIGKILL)";
      const std::size_t before = out.causes.size();
      from_rules(checked, {"memory-floor", "guaranteed-qos"}, title, out);
      if (out.causes.size() == before) {
        out.causes.push_back({title, "", "the container used more memory than its limit",
                              "raise resources.limits.memory (and requests.memory, to stay Guaranteed)",
                              "memory-floor (with model annotations it sizes the limit)"});
      }
      if (reason != "OOMKilled") {
        out.causes[before].explanation =
            "SIGKILL without OOMKilled: the OOM killer of a child process (a "
            "DataLoader worker), a failed liveness probe or a preemption. " +
            out.causes[before].explanation;
      }
      out.causes[before].quote = "container \"" + text_at(s, {"name"}) + "\": terminated " +
                                 (reason.empty() ? "" : reason + ", ") + "exit code " +
                                 (exit.is_number() ? exit.dump() : "?");
      return;
    }
  }
}

// A workload's pods refused: FailedCreate (and DRA claim) events on it and on what it controls.
void refused(const WhyInput& input, Diagnosis& out) {
  std::vector<const json*> objects{&input.object};
  const std::string uid = text_at(input.object, {"metadata", "uid"});
  for (const json& o : input.owned) {
    if (controlled_by(o, uid)) objects.push_back(&o);
  }
  for (const json* o : objects) {
    const std::string kind = text_at(*o, {"kind"});
    const std::string name = text_at(*o, {"metadata", "name"});
    const json* last = nullptr;
    for (const json* e : events_about(input.events, kind, name)) {
      const std::string reason = text_at(*e, {"reason"});
      if (reason == "FailedCreate" || reason == "FailedResourceClaimCreation") last = e;
    }
    if (last == nullptr) continue;
    const std::string message = text_at(*last, {"message"});
    Cause c{"no pods: " + lowercase(kind) + " " + name + " could not create them", message, "", "", ""};
    if (message.find("admission webhook") != std::string::npos) {
      c.explanation = "an admission webhook denied the pods; its message above says what to change";
      if (message.find("gpuadmit") != std::string::npos) c.rule = "gpuadmit (the rule named in the message)";
      c.fix =
          "change the pod template as the message says; `gpuadmit check -f` shows the same verdict offline";
    } else if (message.find("exceeded quota") != std::string::npos) {
      c.explanation = "the namespace's ResourceQuota has no room for the pods";
      c.fix = "ask for less, free the quota, or raise it (kubectl describe resourcequota)";
      c.rule = "gpu-quota (warns at admission; enforce denies)";
    } else {
      c.explanation = "the controller could not create the pods";
    }
    out.causes.push_back(std::move(c));
  }
}

}  // namespace

Result<Diagnosis> diagnose(const WhyInput& input, const policy::PolicySet& policies,
                           const policy::ClusterView* view) {
  const json& object = input.object;
  if (!object.is_object()) return make_error("expected a Kubernetes object (a mapping), got something else");
  const std::string kind = text_at(object, {"kind"});
  const std::string ns = text_at(object, {"metadata", "namespace"});
  Diagnosis out;
  out.object = lowercase(kind) + "/" + (ns.empty() ? "" : ns + "/") + text_at(object, {"metadata", "name"});
  auto checked = check_object(object, policies.for_namespace(ns), ns.empty() ? "default" : ns, view);
  if (!checked) return checked.error();
  if (kind == "Pod") {
    out.state = text_at(object, {"status", "phase"});
    if (const std::string reason = text_at(object, {"status", "reason"}); !reason.empty())
      out.state += " (" + reason + ")";
    not_scheduled(object, input, *checked, out);
    killed(object, *checked, out);
  } else {
    // Its pods: those it controls, or those of the ReplicaSets and Jobs it controls.
    std::vector<std::string> controllers{text_at(object, {"metadata", "uid"})};
    for (const json& o : input.owned) {
      if (text_at(o, {"kind"}) != "Pod" && controlled_by(o, controllers.front()))
        controllers.push_back(text_at(o, {"metadata", "uid"}));
    }
    const auto pods = std::count_if(input.owned.begin(), input.owned.end(), [&](const json& o) {
      return text_at(o, {"kind"}) == "Pod" &&
             std::any_of(controllers.begin(), controllers.end(),
                         [&](const std::string& c) { return controlled_by(o, c); });
    });
    out.state = pods == 0 ? "no pods" : std::to_string(pods) + (pods == 1 ? " pod" : " pods");
    refused(input, out);
    from_rules(*checked, template_rules(), "its pod template, as admission judges it now", out);
  }
  from_rules(*checked, {"cuda-driver"}, "CUDA and driver", out);
  if (out.causes.empty() && !checked->checked) {
    out.causes.push_back({"not judged", "", checked->skipped_reason, "", ""});
  }
  return out;
}

json to_json(const Diagnosis& d) {
  json causes = json::array();
  for (const Cause& c : d.causes) {
    causes.push_back({{"title", c.title},
                      {"quote", c.quote},
                      {"explanation", c.explanation},
                      {"fix", c.fix},
                      {"rule", c.rule}});
  }
  return {{"object", d.object}, {"state", d.state}, {"causes", causes}};
}

std::string to_text(const Diagnosis& d) {
  std::string out = d.object + ": " + (d.state.empty() ? "unknown state" : d.state) + "\n";
  if (d.causes.empty()) return out + "gpuadmit finds nothing wrong with it.\n";
  const auto indented = [](const std::string& text, const std::string& pad) {
    std::string r = pad;
    for (const char c : text) {
      r += c;
      if (c == '\n') r += pad;
    }
    return r;
  };
  for (std::size_t i = 0; i < d.causes.size(); ++i) {
    const Cause& c = d.causes[i];
    out += std::to_string(i + 1) + ". " + c.title + "\n";
    if (!c.quote.empty()) out += "   Kubernetes says: " + indented(c.quote, "   ").substr(3) + "\n";
    if (!c.explanation.empty()) out += indented(c.explanation, "   ") + "\n";
    if (!c.fix.empty()) out += "   Fix:\n" + indented(c.fix, "     ") + "\n";
    if (!c.rule.empty()) out += "   Rule: " + c.rule + "\n";
  }
  return out;
}

}  // namespace gpuadmit::admission
