#pragma once
#ifndef POLY_TERMS
#define POLY_TERMS 24
#endif
void launch_poly(const float *x, float *y, int n);
void launch_scale(float *y, float a, int n);
