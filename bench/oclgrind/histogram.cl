// 256-bin histogram of 16 M values: each group counts into local memory with
// atomics (a grid-stride loop), then adds its counts to the global bins.
#define N (1u << 24)
#define BINS 256
__kernel void histogram(__global const uint* data, __global uint* bins) {
    __local uint counts[BINS];
    uint lid = get_local_id(0);
    counts[lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint stride = get_num_groups(0) * BINS;
    for (uint i = get_group_id(0) * BINS + lid; i < N; i += stride) {
        atomic_inc(&counts[data[i] % BINS]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    atomic_add(&bins[lid], counts[lid]);
}
