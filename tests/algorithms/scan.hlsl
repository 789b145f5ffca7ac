// Double-buffered inclusive scan: each step reads one buffer and writes the
// other, one barrier per step. Correct, nothing to report.
StructuredBuffer<float> input;
RWStructuredBuffer<float> output;
groupshared float buf[2][64];

[numthreads(64, 1, 1)]
void scan(uint3 gtid : SV_GroupThreadID, uint3 gid : SV_GroupID)
{
    uint t = gtid.x;
    uint src = 0;
    buf[0][t] = input[gid.x * 64 + t];
    GroupMemoryBarrierWithGroupSync(); // ok
    for (uint offset = 1; offset < 64; offset <<= 1) {
        uint dst = 1 - src;
        if (t >= offset)
            buf[dst][t] = buf[src][t] + buf[src][t - offset]; // ok
        else
            buf[dst][t] = buf[src][t]; // ok
        GroupMemoryBarrierWithGroupSync(); // ok
        src = dst;
    }
    output[gid.x * 64 + t] = buf[src][t];
}
