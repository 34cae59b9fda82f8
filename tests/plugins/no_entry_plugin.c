/* A shared library that is not a plugin: it exports no negotiation entry point. */
int not_a_plugin(void) { return 1; }
