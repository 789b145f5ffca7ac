#version 450
// A reduction whose out-of-range threads return before the barrier: the
// threads that stay wait for ones that never arrive.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Input { float data_in[]; };
layout(std430, binding = 1) writeonly buffer Output { float data_out[]; };
layout(push_constant) uniform Params { uint n; };
shared float s[64];

void main()
{
    uint t = gl_LocalInvocationID.x;
    uint i = gl_WorkGroupID.x * 64 + t;
    if (i >= n)
        return;
    s[t] = data_in[i];
    barrier(); // expect: barrier-in-divergent-cf
    if (t == 0) {
        float sum = 0.0;
        for (uint k = 0; k < 64; ++k)
            sum += s[k];
        data_out[gl_WorkGroupID.x] = sum;
    }
}
