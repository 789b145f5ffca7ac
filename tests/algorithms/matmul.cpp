// Tiled matrix multiply whose loop lacks its trailing barrier: the next
// iteration's tile loads overwrite what slower threads still read.
#include <amp.h>
using namespace concurrency;

void matmul(array_view<const float, 2> A, array_view<const float, 2> B, array_view<float, 2> C, int n)
{
    parallel_for_each(C.extent.tile<8, 8>(), [=](tiled_index<8, 8> ti) restrict(amp) {
        tile_static float As[8][8];
        tile_static float Bs[8][8];
        int ty = ti.local[0], tx = ti.local[1];
        int row = ti.global[0], col = ti.global[1];
        float acc = 0.0f;
        for (int t = 0; t < n; t += 8) {
            As[ty][tx] = A(row, t + tx); // expect: groupshared-read-then-no-barrier-write
            Bs[ty][tx] = B(t + ty, col); // expect: groupshared-read-then-no-barrier-write
            ti.barrier.wait(); // ok
            for (int k = 0; k < 8; ++k)
                acc += As[ty][k] * Bs[k][tx];
        }
        C[ti.global] = acc; // ok
    });
}
