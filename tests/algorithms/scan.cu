// Double-buffered inclusive scan: each step reads one buffer and writes the
// other, one barrier per step. Correct, nothing to report.
// args: --group-size 64,1,1
__global__ void scan(const float* in, float* out)
{
    __shared__ float buf[2][64];
    unsigned int t = threadIdx.x;
    unsigned int src = 0;
    buf[0][t] = in[blockIdx.x * 64 + t];
    __syncthreads(); // ok
    for (unsigned int offset = 1; offset < 64; offset <<= 1) {
        unsigned int dst = 1 - src;
        if (t >= offset)
            buf[dst][t] = buf[src][t] + buf[src][t - offset]; // ok
        else
            buf[dst][t] = buf[src][t]; // ok
        __syncthreads(); // ok
        src = dst;
    }
    out[blockIdx.x * 64 + t] = buf[src][t];
}
