// A per-group sum with a classic bug: the bounds check returns before the barrier.
#define GROUP_SIZE 256
#define SYNC() GroupMemoryBarrierWithGroupSync()

cbuffer Params : register(b0)
{
    uint InputCount;
};

StructuredBuffer<float> Input : register(t0);
RWStructuredBuffer<float> GroupSums : register(u0);
groupshared float Partial[GROUP_SIZE];

[numthreads(GROUP_SIZE, 1, 1)]
void SumGroups(uint3 dtid : SV_DispatchThreadID, uint3 gid : SV_GroupID, uint li : SV_GroupIndex)
{
    if (dtid.x >= InputCount)
        return;                     // threads past the end leave early...
    Partial[li] = Input[dtid.x];
    SYNC();                         // ...and the others wait for them here
    for (uint s = GROUP_SIZE / 2; s > 0; s >>= 1)
    {
        if (li < s)
            Partial[li] += Partial[li + s];
        SYNC();
    }
    if (li == 0)
        GroupSums[gid.x] = Partial[0];
}
