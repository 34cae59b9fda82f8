#include <memory>

#include "guard.hpp"
#include "handles.hpp"
#include "sys/utf8_path.hpp"

using archfit::capi::guarded;

extern "C" {

archfit_status archfit_context_create(const archfit_context_options* options,
                                      archfit_context** out_context) noexcept {
  return guarded(__func__, [&] {
    archfit::capi::require_argument(out_context, "out_context");
    const auto settings = archfit::capi::read_options(options, "archfit_context_options");
    archfit::session::SessionSettings session;
    session.threads = settings.threads;
    if (settings.libcuda) session.libcuda = archfit::sys::path_of_utf8(settings.libcuda);
    // A Session holds a mutex: made in place, never moved.
    std::unique_ptr<archfit_context> context(
        new archfit_context{archfit::session::Session(std::move(session))});
    *out_context = context.release();
  });
}

void archfit_context_destroy(archfit_context* context) noexcept { delete context; }

}  // extern "C"
