// Double-buffered inclusive scan: each step reads one buffer and writes the
// other, one barrier per step. Correct, nothing to report.
// args: --group-size 64,1,1
#include <metal_stdlib>
using namespace metal;

kernel void scan(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
                 uint t [[thread_position_in_threadgroup]], uint g [[threadgroup_position_in_grid]])
{
    threadgroup float buf[2][64];
    uint src = 0;
    buf[0][t] = in[g * 64 + t];
    threadgroup_barrier(mem_flags::mem_threadgroup); // ok
    for (uint offset = 1; offset < 64; offset <<= 1) {
        uint dst = 1 - src;
        if (t >= offset)
            buf[dst][t] = buf[src][t] + buf[src][t - offset]; // ok
        else
            buf[dst][t] = buf[src][t]; // ok
        threadgroup_barrier(mem_flags::mem_threadgroup); // ok
        src = dst;
    }
    out[g * 64 + t] = buf[src][t];
}
