#pragma once
// out[i] = sum over a window of in, computed with a per-thread tile.
void launch_window_sum(const float *in, float *out, int n);
