// Tiled matrix multiply whose loop lacks its trailing barrier: the next
// iteration's tile loads overwrite what slower threads still read.
StructuredBuffer<float> A;
StructuredBuffer<float> B;
RWStructuredBuffer<float> C;
cbuffer Params { uint n; };
groupshared float As[8][8];
groupshared float Bs[8][8];

[numthreads(8, 8, 1)]
void matmul(uint3 gtid : SV_GroupThreadID, uint3 gid : SV_GroupID)
{
    uint tx = gtid.x, ty = gtid.y;
    uint row = gid.y * 8 + ty, col = gid.x * 8 + tx;
    float acc = 0.0f;
    for (uint t = 0; t < n; t += 8) {
        As[ty][tx] = A[row * n + t + tx]; // expect: groupshared-read-then-no-barrier-write
        Bs[ty][tx] = B[(t + ty) * n + col]; // expect: groupshared-read-then-no-barrier-write
        GroupMemoryBarrierWithGroupSync(); // ok
        for (uint k = 0; k < 8; ++k)
            acc += As[ty][k] * Bs[k][tx];
    }
    if (row < n && col < n)
        C[row * n + col] = acc; // ok
}
