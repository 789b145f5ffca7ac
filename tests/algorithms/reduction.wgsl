// Tree reduction over a group of 64: correct, nothing to report.
@group(0) @binding(0) var<storage, read> data_in: array<f32>;
@group(0) @binding(1) var<storage, read_write> data_out: array<f32>;
var<workgroup> s: array<f32, 64>;

@compute @workgroup_size(64)
fn reduce(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let t = lid.x;
    s[t] = data_in[wid.x * 64u + t];
    workgroupBarrier(); // ok
    for (var stride = 32u; stride > 0u; stride = stride >> 1u) {
        if (t < stride) {
            s[t] = s[t] + s[t + stride]; // ok
        }
        workgroupBarrier(); // ok
    }
    if (t == 0u) {
        data_out[wid.x] = s[0];
    }
}
