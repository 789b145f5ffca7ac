// Sum of 2^24 floats: each group of 256 adds 512 inputs in local memory
// (a tree with a barrier per level) and writes one partial sum.
__kernel void reduce(__global const float* in, __global float* partial) {
    __local float sums[256];
    uint lid = get_local_id(0);
    uint i = get_group_id(0) * 512 + lid;
    sums[lid] = in[i] + in[i + 256];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint stride = 128; stride > 0; stride >>= 1) {
        if (lid < stride) {
            sums[lid] += sums[lid + stride];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        partial[get_group_id(0)] = sums[0];
    }
}
