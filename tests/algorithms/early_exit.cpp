// A reduction whose out-of-range threads return before the barrier: the
// threads that stay wait for ones that never arrive.
#include <amp.h>
using namespace concurrency;

void reduce_early_exit(array_view<const float, 1> in, array_view<float, 1> out, int n)
{
    parallel_for_each(in.extent.tile<64>(), [=](tiled_index<64> ti) restrict(amp) {
        tile_static float s[64];
        int t = ti.local[0];
        int i = ti.global[0];
        if (i >= n)
            return;
        s[t] = in[i];
        ti.barrier.wait(); // expect: barrier-in-divergent-cf
        if (t == 0) {
            float sum = 0.0f;
            for (int k = 0; k < 64; ++k)
                sum += s[k];
            out[ti.tile[0]] = sum;
        }
    });
}
