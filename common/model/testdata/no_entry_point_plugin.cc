// A test shared library that is not a plug-in: it lacks the entry point.

extern "C" __attribute__((visibility("default"))) int pstrain_something_else() { return 0; }
