// ciq-ptxas-driver: every mode but the plain pass-through (see main.cpp).
#include "Driver.h"

int main(int argc, char **argv) { return ciq::wrapper::runWrapper(argc, argv); }
