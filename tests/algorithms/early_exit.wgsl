// A reduction whose out-of-range threads return before the barrier: the
// threads that stay wait for ones that never arrive.
struct Params { n: u32 }
@group(0) @binding(0) var<storage, read> data_in: array<f32>;
@group(0) @binding(1) var<storage, read_write> data_out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;
var<workgroup> s: array<f32, 64>;

@compute @workgroup_size(64)
fn reduce_early_exit(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let t = lid.x;
    let i = wid.x * 64u + t;
    if (i >= params.n) {
        return;
    }
    s[t] = data_in[i];
    workgroupBarrier(); // expect: barrier-in-divergent-cf
    if (t == 0u) {
        var sum = 0.0;
        for (var k = 0u; k < 64u; k = k + 1u) {
            sum = sum + s[k];
        }
        data_out[wid.x] = sum;
    }
}
