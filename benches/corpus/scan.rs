//! The original corpus, kept as a stress case (`BENCH_CORPUS=scan`): one HLSL
//! tree reduction and one CUDA double-buffered Hillis–Steele scan, repeated
//! under new names. The scan's geometric loop counters are what make the race
//! analysis's integer solver slow.

const HLSL_KERNEL: &str = r#"
cbuffer ParamsNUM : register(b0) { uint CountNUM; float ScaleNUM; };
RWStructuredBuffer<float> OutNUM : register(u0);
StructuredBuffer<float> InNUM : register(t0);
groupshared float TileNUM[256];

float WeightNUM(uint i) { return (float)(i & 7) * ScaleNUM; }

[numthreads(256, 1, 1)]
void ReduceNUM(uint3 dtid : SV_DispatchThreadID, uint3 gid : SV_GroupID, uint li : SV_GroupIndex)
{
    float v = dtid.x < CountNUM ? InNUM[dtid.x] * WeightNUM(li) : 0.0;
    TileNUM[li] = v;
    GroupMemoryBarrierWithGroupSync();
    [unroll]
    for (uint s = 128; s > 0; s >>= 1)
    {
        if (li < s)
            TileNUM[li] += TileNUM[li + s];
        GroupMemoryBarrierWithGroupSync();
    }
    if (li == 0)
        OutNUM[gid.x] = TileNUM[0];
}
"#;

const CUDA_KERNEL: &str = r#"
__device__ float clampNUM(float x, float lo, float hi) { return fminf(fmaxf(x, lo), hi); }

__global__ void scanNUM(const float* __restrict__ in, float* out, int n)
{
    __shared__ float buf[2][256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int pout = 0, pin = 1;
    buf[pout][threadIdx.x] = i < n ? clampNUM(in[i], 0.0f, 1.0f) : 0.0f;
    __syncthreads();
    for (int offset = 1; offset < 256; offset *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (threadIdx.x >= offset)
            buf[pout][threadIdx.x] = buf[pin][threadIdx.x] + buf[pin][threadIdx.x - offset];
        else
            buf[pout][threadIdx.x] = buf[pin][threadIdx.x];
        __syncthreads();
    }
    if (i < n)
        out[i] = buf[pout][threadIdx.x];
}
"#;

/// HLSL file number `file`: the reduction, repeated until `bytes` long.
pub fn hlsl_file(file: usize, bytes: usize) -> String {
    repeat(HLSL_KERNEL, file, bytes)
}

/// CUDA file number `file`: the scan, repeated until `bytes` long.
pub fn cuda_file(file: usize, bytes: usize) -> String {
    repeat(CUDA_KERNEL, file, bytes)
}

fn repeat(kernel: &str, file: usize, bytes: usize) -> String {
    let mut text = String::new();
    let mut k = 0;
    while text.len() < bytes {
        text.push_str(&kernel.replace("NUM", &format!("{file}_{k}")));
        k += 1;
    }
    text
}
