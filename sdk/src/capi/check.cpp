#include <memory>
#include <optional>

#include "check/report_json.hpp"
#include "check_settings.hpp"
#include "util/json_text.hpp"

using archfit::capi::ApiError;
using archfit::capi::guarded;
using archfit::capi::require_argument;
namespace check = archfit::check;

namespace {

const check::ComponentResult* component_at(const archfit_report* report, size_t index) {
  if (!report || index >= report->result.components.size()) return nullptr;
  return &report->result.components[index];
}

const check::StackResult* stack_at(const archfit_report* report, size_t index) {
  if (!report || index >= report->result.stacks.size()) return nullptr;
  return &report->result.stacks[index];
}

}  // namespace

extern "C" {

archfit_status archfit_check_run(archfit_context* context, const archfit_check_options* given,
                                 archfit_report** out_report) noexcept {
  return guarded(__func__, [&] {
    require_argument(context, "context");
    require_argument(given, "options");
    require_argument(out_report, "out_report");
    const auto call = archfit::capi::check_settings(given, "archfit_check_options");
    auto report = std::make_unique<archfit_report>();
    try {
      report->result = context->session.check(call.request, call.choices);
    } catch (const check::CheckError& error) {
      throw ApiError{ARCHFIT_ERROR_INVALID_ARGUMENT, error.what()};
    }
    for (const auto& component : report->result.components) {
      report->verdicts.emplace_back(archfit::compat::to_string(component.verdict));
    }
    *out_report = report.release();
  });
}

void archfit_report_destroy(archfit_report* report) noexcept { delete report; }

archfit_overall_verdict archfit_report_verdict(const archfit_report* report) noexcept {
  if (!report) return ARCHFIT_UNKNOWN;
  switch (report->result.verdict) {
    case check::OverallVerdict::fits:
      return ARCHFIT_FITS;
    case check::OverallVerdict::fails:
      return ARCHFIT_FAILS;
    case check::OverallVerdict::unknown:
      break;
  }
  return ARCHFIT_UNKNOWN;
}

size_t archfit_report_component_count(const archfit_report* report) noexcept {
  return report ? report->result.components.size() : 0;
}

const char* archfit_report_component_name(const archfit_report* report, size_t index) noexcept {
  const auto* component = component_at(report, index);
  return component ? component->component.name.c_str() : nullptr;
}

const char* archfit_report_component_verdict(const archfit_report* report, size_t index) noexcept {
  return component_at(report, index) ? report->verdicts[index].c_str() : nullptr;
}

const char* archfit_report_component_fix(const archfit_report* report, size_t index) noexcept {
  const auto* component = component_at(report, index);
  return component ? component->fix.summary.c_str() : nullptr;
}

const char* archfit_report_summary(const archfit_report* report) noexcept {
  return report ? report->result.summary.c_str() : "";
}

int archfit_report_component_blocks(const archfit_report* report, size_t index) noexcept {
  const auto* component = component_at(report, index);
  return component ? (component->blocks() ? 1 : 0) : -1;
}

size_t archfit_report_stack_count(const archfit_report* report) noexcept {
  return report ? report->result.stacks.size() : 0;
}

const char* archfit_report_stack_name(const archfit_report* report, size_t index) noexcept {
  const auto* stack = stack_at(report, index);
  return stack ? stack->name.c_str() : nullptr;
}

const char* archfit_report_stack_verdict(const archfit_report* report, size_t index) noexcept {
  // The names are string literals (compat/verdict.cpp): NUL-terminated, static.
  const auto* stack = stack_at(report, index);
  return stack ? archfit::compat::to_string(stack->verdict).data() : nullptr;
}

int archfit_report_stack_blocks(const archfit_report* report, size_t index) noexcept {
  const auto* stack = stack_at(report, index);
  return stack ? (archfit::compat::is_failure(stack->verdict) ? 1 : 0) : -1;
}

size_t archfit_verdict_count(void) noexcept { return archfit::compat::verdict_table().size(); }

const char* archfit_verdict_name(size_t index) noexcept {
  // The names are string literals (compat/verdict.cpp): NUL-terminated, static.
  const auto table = archfit::compat::verdict_table();
  return index < table.size() ? table[index].name.data() : nullptr;
}

int archfit_verdict_blocks(const char* verdict) noexcept {
  const auto known = verdict ? archfit::compat::verdict_from_string(verdict) : std::nullopt;
  return known ? (archfit::compat::is_failure(*known) ? 1 : 0) : -1;
}

int archfit_verdict_warns(const char* verdict) noexcept {
  const auto known = verdict ? archfit::compat::verdict_from_string(verdict) : std::nullopt;
  return known ? (archfit::compat::is_warning(*known) ? 1 : 0) : -1;
}

const char* archfit_report_stack_fix(const archfit_report* report, size_t index) noexcept {
  const auto* stack = stack_at(report, index);
  return stack ? stack->fix.summary.c_str() : nullptr;
}

const char* archfit_report_stack_fix_command(const archfit_report* report, size_t index,
                                             size_t command) noexcept {
  const auto* stack = stack_at(report, index);
  if (!stack || command >= stack->fix.commands.size()) return nullptr;
  return stack->fix.commands[command].c_str();
}

archfit_status archfit_report_json(const archfit_report* report, const char** out_json) noexcept {
  return guarded(__func__, [&] {
    require_argument(report, "report");
    require_argument(out_json, "out_json");
    std::call_once(report->json_once, [&] {
      report->json = archfit::util::json_text(check::check_document(report->result));
    });
    *out_json = report->json.c_str();
  });
}

}  // extern "C"
