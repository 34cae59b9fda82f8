#pragma once
// The probe stage of a check: the devices judged against (named with --gpu,
// else every real GPU) and the driver (named with --driver, else the real
// one), with what the knowledge base knows of each.
#include "kb/knowledge_base.hpp"
#include "report.hpp"
#include "request.hpp"

namespace archfit::check {

// Fills report.devices and report.no_gpu (and the real driver's version when it
// was loaded): the GPUs named with --gpu, else every real GPU; without either
// the report says why and judges nothing. The real driver is loaded only when
// a device or the driver is not named (cuInit inside a host process starts
// threads). Throws CheckError for a GPU name the knowledge base does not know.
void choose_devices(const CheckRequest& request, const CheckResources& resources,
                    const kb::KnowledgeBase& kb, CheckReport& report);

// Fills report.driver (named with --driver, else what choose_devices read)
// and what the knowledge base knows of each device under it. Throws
// CheckError for a driver version the knowledge base does not know.
void choose_driver(const CheckRequest& request, const kb::KnowledgeBase& kb, CheckReport& report);

}  // namespace archfit::check
