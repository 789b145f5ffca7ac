#version 450
// Double-buffered inclusive scan: each step reads one buffer and writes the
// other, one barrier per step. Correct, nothing to report.
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Input { float data_in[]; };
layout(std430, binding = 1) writeonly buffer Output { float data_out[]; };
shared float buf[2][64];

void main()
{
    uint t = gl_LocalInvocationID.x;
    uint src = 0;
    buf[0][t] = data_in[gl_WorkGroupID.x * 64 + t];
    barrier(); // ok
    for (uint offset = 1; offset < 64; offset <<= 1) {
        uint dst = 1 - src;
        if (t >= offset)
            buf[dst][t] = buf[src][t] + buf[src][t - offset]; // ok
        else
            buf[dst][t] = buf[src][t]; // ok
        barrier(); // ok
        src = dst;
    }
    data_out[gl_WorkGroupID.x * 64 + t] = buf[src][t];
}
