// Tiled matrix multiply whose loop lacks its trailing barrier: the next
// iteration's tile loads overwrite what slower threads still read.
// args: --group-size 8,8,1
#include <metal_stdlib>
using namespace metal;

kernel void matmul(device const float* A [[buffer(0)]], device const float* B [[buffer(1)]], device float* C [[buffer(2)]],
                   constant uint& n [[buffer(3)]], uint2 lid [[thread_position_in_threadgroup]], uint2 gid [[threadgroup_position_in_grid]])
{
    threadgroup float As[8][8];
    threadgroup float Bs[8][8];
    uint tx = lid.x, ty = lid.y;
    uint row = gid.y * 8 + ty, col = gid.x * 8 + tx;
    float acc = 0.0f;
    for (uint t = 0; t < n; t += 8) {
        As[ty][tx] = A[row * n + t + tx]; // expect: groupshared-read-then-no-barrier-write
        Bs[ty][tx] = B[(t + ty) * n + col]; // expect: groupshared-read-then-no-barrier-write
        threadgroup_barrier(mem_flags::mem_threadgroup); // ok
        for (uint k = 0; k < 8; ++k)
            acc += As[ty][k] * Bs[k][tx];
    }
    if (row < n && col < n)
        C[row * n + col] = acc; // ok
}
