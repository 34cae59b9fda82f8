#pragma once
// The probe stage of a check: the devices judged against (named with --gpu,
// else every real GPU) and the driver (named with --driver, else the real
// one), with what the knowledge base knows of each.
#include "kb/knowledge_base.hpp"
#include "report.hpp"
#include "request.hpp"

namespace archfit::check {

// Fills report.devices, report.no_gpu and report.driver. The real driver is
// loaded only when a device or the driver is not named (cuInit inside a host
// process starts threads). Throws CheckError for a GPU or driver name the
// knowledge base does not know.
void probe_devices_and_driver(const CheckRequest& request, const CheckResources& resources,
                              const kb::KnowledgeBase& kb, CheckReport& report);

}  // namespace archfit::check
