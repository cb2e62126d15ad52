// libsystemc's own main() calls sc_main(); test executables use GoogleTest's main() instead, but the
// library still needs the symbol to link. It is never called.
extern "C" int sc_main(int, char*[]) { return 1; }
