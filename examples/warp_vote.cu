// Voting within a warp and then synchronizing the block under the vote: a hang.

__global__ void compact(const int* keys, int* out, int n)
{
    __shared__ int staged[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int key = i < n ? keys[i] : -1;
    bool any_valid = __any_sync(0xffffffffu, key >= 0);
    if (any_valid) {
        staged[threadIdx.x] = key;
        __syncthreads();
        out[i] = staged[threadIdx.x ^ 1];
    }
}
