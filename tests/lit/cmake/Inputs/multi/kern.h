#pragma once
void launchAccumulate(const float *x, float *y, int n);
void launchSaxpy(float a, const float *x, float *y, int n);
