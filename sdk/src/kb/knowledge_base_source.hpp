#pragma once
// A knowledge base that may still be loading: a Session starts reading the
// YAML when a flow begins and hands the flow this source, so that the read
// runs beside the flow's first scan; the flow waits for it only when it
// first needs the knowledge base. Shared: every flow that reads the same
// folder gets the same source, and the YAML is read once.
#include <filesystem>
#include <future>
#include <memory>
#include <optional>

#include "kb/knowledge_base.hpp"

namespace archfit::kb {

using KnowledgeBaseSource = std::shared_future<std::shared_ptr<const KnowledgeBase>>;

// `dir` read with `parts` on a thread of its own, from now on
// (std::launch::async), or by the first get() (std::launch::deferred: for a
// caller with nothing to do meanwhile, which a thread would only slow). get()
// on the result waits for it and throws KbError when it could not be read.
KnowledgeBaseSource load_knowledge_base_async(std::filesystem::path dir, KbParts parts,
                                              std::launch when = std::launch::async);

// The folder resolve_kb_dir(`given`) names, loaded as above; a folder that
// cannot be found is a source whose get() throws that KbError.
KnowledgeBaseSource find_and_load_knowledge_base_async(
    const std::optional<std::filesystem::path>& given, KbParts parts);

// A source that fails with the exception being handled (in a catch block).
KnowledgeBaseSource failed_knowledge_base();

// A knowledge base already loaded, as a source that is ready.
KnowledgeBaseSource ready_knowledge_base(std::shared_ptr<const KnowledgeBase> knowledge_base);

}  // namespace archfit::kb
