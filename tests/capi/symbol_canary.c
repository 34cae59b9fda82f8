/* A library that breaks the export rule on purpose, so that the symbol check
 * is itself tested: it must fail and name leaky_helper. */
__attribute__((visibility("default"))) int archfit_canary_ok(void) { return 1; }
__attribute__((visibility("default"))) int leaky_helper(void) { return 2; }
