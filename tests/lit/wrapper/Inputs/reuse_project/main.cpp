#include <cstdio>
void launchSaxpy(float *y, const float *x, float a, int n);
int main(int argc, char **) {
  if (argc > 1)
    launchSaxpy(nullptr, nullptr, 2.0f, 0);
  std::puts("reuse_app");
  return 0;
}
