// Tree reduction over a group of 64: correct, nothing to report.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void reduce(__global const float* in, __global float* out)
{
    __local float s[64];
    uint t = get_local_id(0);
    s[t] = in[get_group_id(0) * 64 + t];
    barrier(CLK_LOCAL_MEM_FENCE); // ok
    for (uint stride = 32; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride]; // ok
        barrier(CLK_LOCAL_MEM_FENCE); // ok
    }
    if (t == 0)
        out[get_group_id(0)] = s[0];
}
