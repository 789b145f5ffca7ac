// A reduction whose out-of-range threads return before the barrier: the
// threads that stay wait for ones that never arrive.
// args: --group-size 64,1,1
__global__ void reduce_early_exit(const float* in, float* out, unsigned int n)
{
    __shared__ float s[64];
    unsigned int t = threadIdx.x;
    unsigned int i = blockIdx.x * 64 + t;
    if (i >= n)
        return;
    s[t] = in[i];
    __syncthreads(); // expect: barrier-in-divergent-cf
    if (t == 0) {
        float sum = 0.0f;
        for (unsigned int k = 0; k < 64; ++k)
            sum += s[k];
        out[blockIdx.x] = sum;
    }
}
