// Tiled matrix multiply whose loop lacks its trailing barrier: the next
// iteration's tile loads overwrite what slower threads still read.
struct Params { n: u32 }
@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;
var<workgroup> As: array<array<f32, 8>, 8>;
var<workgroup> Bs: array<array<f32, 8>, 8>;

@compute @workgroup_size(8, 8)
fn matmul(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let n = params.n;
    let tx = lid.x;
    let ty = lid.y;
    let row = wid.y * 8u + ty;
    let col = wid.x * 8u + tx;
    var acc = 0.0;
    for (var t = 0u; t < n; t = t + 8u) {
        As[ty][tx] = A[row * n + t + tx]; // expect: groupshared-read-then-no-barrier-write
        Bs[ty][tx] = B[(t + ty) * n + col]; // expect: groupshared-read-then-no-barrier-write
        workgroupBarrier(); // ok
        for (var k = 0u; k < 8u; k = k + 1u) {
            acc = acc + As[ty][k] * Bs[k][tx];
        }
    }
    if (row < n && col < n) {
        C[row * n + col] = acc; // ok
    }
}
