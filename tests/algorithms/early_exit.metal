// A reduction whose out-of-range threads return before the barrier: the
// threads that stay wait for ones that never arrive.
// args: --group-size 64,1,1
#include <metal_stdlib>
using namespace metal;

kernel void reduce_early_exit(device const float* in [[buffer(0)]], device float* out [[buffer(1)]], constant uint& n [[buffer(2)]],
                              uint t [[thread_position_in_threadgroup]], uint g [[threadgroup_position_in_grid]])
{
    threadgroup float s[64];
    uint i = g * 64 + t;
    if (i >= n)
        return;
    s[t] = in[i];
    threadgroup_barrier(mem_flags::mem_threadgroup); // expect: barrier-in-divergent-cf
    if (t == 0) {
        float sum = 0.0f;
        for (uint k = 0; k < 64; ++k)
            sum += s[k];
        out[g] = sum;
    }
}
