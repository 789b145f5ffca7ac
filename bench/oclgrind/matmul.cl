// Tiled matrix multiply C = A * B, 512 x 512 floats, 16 x 16 tiles in local memory.
#define N 512
#define TS 16
__kernel void matmul(__global const float* A, __global const float* B, __global float* C) {
    __local float As[TS][TS];
    __local float Bs[TS][TS];
    uint tx = get_local_id(0);
    uint ty = get_local_id(1);
    uint row = get_group_id(1) * TS + ty;
    uint col = get_group_id(0) * TS + tx;
    float acc = 0.0f;
    for (uint t = 0; t < N / TS; t++) {
        As[ty][tx] = A[row * N + t * TS + tx];
        Bs[ty][tx] = B[(t * TS + ty) * N + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < TS; k++) {
            acc += As[ty][k] * Bs[k][tx];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * N + col] = acc;
}
