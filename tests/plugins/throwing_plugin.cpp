// A C++ plugin that lets an exception out of its C entry point: the host
// must reject it with the exception's message and carry on.
#include <stdexcept>

#include "archfit/archfit_plugin.h"

extern "C" ARCHFIT_PLUGIN_EXPORT int archfit_plugin_negotiate(uint32_t, uint32_t, uint32_t*,
                                                              archfit_plugin_info*) {
  throw std::runtime_error("the plugin's own start-up failed");
}
