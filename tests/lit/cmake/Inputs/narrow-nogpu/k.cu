__global__ void k(float *a) { a[threadIdx.x] *= 2.f; }
int main() { return 0; }
