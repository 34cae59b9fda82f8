#pragma once
// People's version of a diagnosis (`archfit explain`): its headline, the
// category and confidence, the error's first line, the component and why,
// what the check of the environment found, the numbered fix, the notes.
#include <string>

#include "diagnose/diagnosis.hpp"

namespace archfit::render {

std::string diagnosis_text(const diagnose::Diagnosis& diagnosis);

}  // namespace archfit::render
