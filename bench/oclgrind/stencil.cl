// The emulator benchmark kernel (crates/lockstep-emu/benches/emu_throughput.rs)
// in OpenCL C: 65 536 work-items in groups of 256, 16 barrier-separated iterations.
__kernel void stencil(__global const float* in, __global float* out) {
    __local float tile[256];
    uint lid = get_local_id(0);
    uint gid = get_group_id(0) * 256 + lid;
    float acc = in[gid];
    for (uint it = 0; it < 16; it++) {
        tile[lid] = acc;
        barrier(CLK_LOCAL_MEM_FENCE);
        acc = acc * 0.5f + tile[(lid + 1) & 255];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[gid] = acc;
}
