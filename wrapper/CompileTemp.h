#include "common/CompileTemp.h" // moved to common/: the lead switches CandidateBuild.cpp, then deletes this
