// A shared-memory histogram in uniform control flow: no findings.
#define BINS 64

__global__ void histogram(const unsigned char* pixels, unsigned* bins, int n)
{
    __shared__ unsigned local[BINS];
    if (threadIdx.x < BINS)
        local[threadIdx.x] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&local[pixels[i] % BINS], 1u);
    __syncthreads();
    if (threadIdx.x < BINS)
        atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}
