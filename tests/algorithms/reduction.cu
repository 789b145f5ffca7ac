// Tree reduction over a group of 64: correct, nothing to report.
// args: --group-size 64,1,1
__global__ void reduce(const float* in, float* out)
{
    __shared__ float s[64];
    unsigned int t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    __syncthreads(); // ok
    for (unsigned int stride = 32; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride]; // ok
        __syncthreads(); // ok
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
}
