#version 450
// Tiled matrix multiply whose loop lacks its trailing barrier: the next
// iteration's tile loads overwrite what slower threads still read.
layout(local_size_x = 8, local_size_y = 8) in;
layout(std430, binding = 0) readonly buffer MatA { float A[]; };
layout(std430, binding = 1) readonly buffer MatB { float B[]; };
layout(std430, binding = 2) writeonly buffer MatC { float C[]; };
layout(push_constant) uniform Params { uint n; };
shared float As[8][8];
shared float Bs[8][8];

void main()
{
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    uint row = gl_WorkGroupID.y * 8 + ty, col = gl_WorkGroupID.x * 8 + tx;
    float acc = 0.0;
    for (uint t = 0; t < n; t += 8) {
        As[ty][tx] = A[row * n + t + tx]; // expect: groupshared-read-then-no-barrier-write
        Bs[ty][tx] = B[(t + ty) * n + col]; // expect: groupshared-read-then-no-barrier-write
        barrier(); // ok
        for (uint k = 0; k < 8; ++k)
            acc += As[ty][k] * Bs[k][tx];
    }
    if (row < n && col < n)
        C[row * n + col] = acc; // ok
}
