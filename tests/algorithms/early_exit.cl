// A reduction whose out-of-range threads return before the barrier: the
// threads that stay wait for ones that never arrive.
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void reduce_early_exit(__global const float* in, __global float* out, uint n)
{
    __local float s[64];
    uint t = get_local_id(0);
    uint i = get_group_id(0) * 64 + t;
    if (i >= n)
        return;
    s[t] = in[i];
    barrier(CLK_LOCAL_MEM_FENCE); // expect: barrier-in-divergent-cf
    if (t == 0) {
        float sum = 0.0f;
        for (uint k = 0; k < 64; ++k)
            sum += s[k];
        out[get_group_id(0)] = sum;
    }
}
