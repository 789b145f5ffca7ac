// Tiled matrix multiply whose loop lacks its trailing barrier: the next
// iteration's tile loads overwrite what slower threads still read.
__kernel __attribute__((reqd_work_group_size(8, 8, 1)))
void matmul(__global const float* A, __global const float* B, __global float* C, uint n)
{
    __local float As[8][8];
    __local float Bs[8][8];
    uint tx = get_local_id(0), ty = get_local_id(1);
    uint row = get_group_id(1) * 8 + ty, col = get_group_id(0) * 8 + tx;
    float acc = 0.0f;
    for (uint t = 0; t < n; t += 8) {
        As[ty][tx] = A[row * n + t + tx]; // expect: groupshared-read-then-no-barrier-write
        Bs[ty][tx] = B[(t + ty) * n + col]; // expect: groupshared-read-then-no-barrier-write
        barrier(CLK_LOCAL_MEM_FENCE); // ok
        for (uint k = 0; k < 8; ++k)
            acc += As[ty][k] * Bs[k][tx];
    }
    if (row < n && col < n)
        C[row * n + col] = acc; // ok
}
