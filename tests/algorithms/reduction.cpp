// Tree reduction over a group of 64: correct, nothing to report.
#include <amp.h>
using namespace concurrency;

void reduce(array_view<const float, 1> in, array_view<float, 1> out)
{
    parallel_for_each(in.extent.tile<64>(), [=](tiled_index<64> ti) restrict(amp) {
        tile_static float s[64];
        int t = ti.local[0];
        s[t] = in[ti.global];
        ti.barrier.wait(); // ok
        for (int stride = 32; stride > 0; stride >>= 1) {
            if (t < stride)
                s[t] += s[t + stride]; // ok
            ti.barrier.wait(); // ok
        }
        if (t == 0)
            out[ti.tile[0]] = s[0];
    });
}
