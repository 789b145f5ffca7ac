// Tree reduction over a group of 64: correct, nothing to report.
// args: --group-size 64,1,1
#include <metal_stdlib>
using namespace metal;

kernel void reduce(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
                   uint t [[thread_position_in_threadgroup]], uint g [[threadgroup_position_in_grid]])
{
    threadgroup float s[64];
    s[t] = in[g * 64 + t];
    threadgroup_barrier(mem_flags::mem_threadgroup); // ok
    for (uint stride = 32; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride]; // ok
        threadgroup_barrier(mem_flags::mem_threadgroup); // ok
    }
    if (t == 0)
        out[g] = s[0];
}
