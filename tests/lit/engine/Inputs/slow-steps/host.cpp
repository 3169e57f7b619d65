// The host-only translation unit the fake host compiler builds.
int host_value() { return 42; }
