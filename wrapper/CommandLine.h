#include "common/CommandLine.h" // moved to common/: the lead switches LockApply.cpp and LockObjects.cpp, then deletes this
