#include "kb/knowledge_base_source.hpp"

#include "kb/kb_error.hpp"

namespace archfit::kb {

KnowledgeBaseSource load_knowledge_base_async(std::filesystem::path dir, KbParts parts,
                                              std::launch when) {
  return std::async(when,
                    [dir = std::move(dir), parts] {
                      return std::make_shared<const KnowledgeBase>(load_knowledge_base(dir, parts));
                    })
      .share();
}

KnowledgeBaseSource find_and_load_knowledge_base_async(
    const std::optional<std::filesystem::path>& given, KbParts parts) {
  try {
    return load_knowledge_base_async(resolve_kb_dir(given), parts);
  } catch (const KbError&) {
    return failed_knowledge_base();
  }
}

KnowledgeBaseSource failed_knowledge_base() {
  std::promise<std::shared_ptr<const KnowledgeBase>> failed;
  failed.set_exception(std::current_exception());
  return failed.get_future().share();
}

KnowledgeBaseSource ready_knowledge_base(std::shared_ptr<const KnowledgeBase> knowledge_base) {
  std::promise<std::shared_ptr<const KnowledgeBase>> promise;
  promise.set_value(std::move(knowledge_base));
  return promise.get_future().share();
}

}  // namespace archfit::kb
