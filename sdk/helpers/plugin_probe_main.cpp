// archfit-plugin-probe: the program plugins are loaded in, never the host
// (src/plugin/probe_helper.hpp says why and how).
#include "plugin/probe_helper.hpp"

int main(int argc, char** argv) { return archfit::plugin::probe_helper_main(argc, argv); }
