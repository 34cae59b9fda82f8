#pragma once
// An error weighed against the environment it came from (the "attribute
// (uses probe+scan+judge)" step of docs/design.md's diagnose flow): the check's
// verdict on the component the traceback names confirms or refutes the
// cause, in words ("xformers 0.0.28.post1 has SASS up to sm_90 and no PTX;
// your GPU is sm_120"), and where the traceback names none, or names only
// PyTorch while another component is what fails, the scan names it.
#include "check/report_read.hpp"
#include "diagnosis.hpp"

namespace archfit::diagnose {

// Fills d.environment (with the check's fixes for what it finds failing),
// the component's version, and d.sm when the text did not name the GPU; may
// name the component (see above). Runs after the
// category is known and before the explanation and fix are written.
void weigh(Diagnosis& d, const check::ReportedEnvironment& environment);

}  // namespace archfit::diagnose
