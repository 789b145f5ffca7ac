// Tree reduction over a group of 64: correct, nothing to report.
StructuredBuffer<float> input;
RWStructuredBuffer<float> output;
groupshared float s[64];

[numthreads(64, 1, 1)]
void reduce(uint3 gtid : SV_GroupThreadID, uint3 gid : SV_GroupID)
{
    uint t = gtid.x;
    s[t] = input[gid.x * 64 + t];
    GroupMemoryBarrierWithGroupSync(); // ok
    for (uint stride = 32; stride > 0; stride >>= 1) {
        if (t < stride)
            s[t] += s[t + stride]; // ok
        GroupMemoryBarrierWithGroupSync(); // ok
    }
    if (t == 0)
        output[gid.x] = s[0];
}
