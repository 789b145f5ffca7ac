// Tiled matrix multiply whose loop lacks its trailing barrier: the next
// iteration's tile loads overwrite what slower threads still read.
// args: --group-size 8,8,1
__global__ void matmul(const float* A, const float* B, float* C, unsigned int n)
{
    __shared__ float As[8][8];
    __shared__ float Bs[8][8];
    unsigned int tx = threadIdx.x, ty = threadIdx.y;
    unsigned int row = blockIdx.y * 8 + ty, col = blockIdx.x * 8 + tx;
    float acc = 0.0f;
    for (unsigned int t = 0; t < n; t += 8) {
        As[ty][tx] = A[row * n + t + tx]; // expect: groupshared-read-then-no-barrier-write
        Bs[ty][tx] = B[(t + ty) * n + col]; // expect: groupshared-read-then-no-barrier-write
        __syncthreads(); // ok
        for (unsigned int k = 0; k < 8; ++k)
            acc += As[ty][k] * Bs[k][tx];
    }
    if (row < n && col < n)
        C[row * n + col] = acc; // ok
}
