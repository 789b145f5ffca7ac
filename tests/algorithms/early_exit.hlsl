// A reduction whose out-of-range threads return before the barrier: the
// threads that stay wait for ones that never arrive.
StructuredBuffer<float> input;
RWStructuredBuffer<float> output;
cbuffer Params { uint n; };
groupshared float s[64];

[numthreads(64, 1, 1)]
void reduce_early_exit(uint3 gtid : SV_GroupThreadID, uint3 gid : SV_GroupID)
{
    uint t = gtid.x;
    uint i = gid.x * 64 + t;
    if (i >= n)
        return;
    s[t] = input[i];
    GroupMemoryBarrierWithGroupSync(); // expect: barrier-in-divergent-cf
    if (t == 0) {
        float sum = 0.0f;
        for (uint k = 0; k < 64; ++k)
            sum += s[k];
        output[gid.x] = sum;
    }
}
