// The program bench.py reads its embedded cubin from; it runs nothing.
int main() { return 0; }
