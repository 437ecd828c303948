// Test kernels of the mock libcuda's PTX interpreter (tests/unit/mock-cuda/test-kernels.c):
// compiled by NVIDIA's nvcc from PyPI (nvidia-cuda-nvcc) to PTX and to fatbins at build time;
// each result is compared with the same computation in plain C.

extern "C" __global__ void vector_add(const float *a, const float *b, float *c, int n)
{
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n)
                c[i] = a[i] + b[i];
}

extern "C" __global__ void saxpy(int n, float alpha, const float *__restrict__ x, float *__restrict__ y)
{
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
                y[i] = alpha * x[i] + y[i];
}

// Sum of each block's elements (blockDim.x a power of two, at most 1024), tree reduction in shared memory.
extern "C" __global__ void reduce_sum(const double *in, double *out, unsigned n)
{
        __shared__ double part[1024];
        unsigned tid = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
        part[tid] = i < n ? in[i] : 0.0;
        __syncthreads();
        for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
                if (tid < s)
                        part[tid] += part[tid + s];
                __syncthreads();
        }
        if (tid == 0)
                out[blockIdx.x] = part[0];
}

// C = A * B for n x n row-major matrices, 16 x 16 tiles in shared memory.
#define TILE 16
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int n)
{
        __shared__ float As[TILE][TILE], Bs[TILE][TILE];
        int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
        float acc = 0.0f;
        for (int t = 0; t < (n + TILE - 1) / TILE; t++) {
                int ac = t * TILE + threadIdx.x, br = t * TILE + threadIdx.y;
                As[threadIdx.y][threadIdx.x] = row < n && ac < n ? A[row * n + ac] : 0.0f;
                Bs[threadIdx.y][threadIdx.x] = br < n && col < n ? B[br * n + col] : 0.0f;
                __syncthreads();
                for (int k = 0; k < TILE; k++)
                        acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
                __syncthreads();
        }
        if (row < n && col < n)
                C[row * n + col] = acc;
}

// 256-bin histogram of bytes: per-block bins in shared memory (atom.shared.add), merged with atom.global.add;
// also counts the elements with atomicCAS-based max and atomicExch of the last index seen.
extern "C" __global__ void histogram(const unsigned char *data, unsigned n, unsigned *bins, int *maxval,
                                     unsigned *last)
{
        __shared__ unsigned local[256];
        for (unsigned b = threadIdx.x; b < 256; b += blockDim.x)
                local[b] = 0;
        __syncthreads();
        for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
                unsigned char v = data[i];
                atomicAdd(&local[v], 1u);
                int old = *maxval, assumed;
                do {
                        assumed = old;
                        if (assumed >= (int) v)
                                break;
                        old = atomicCAS(maxval, assumed, (int) v);
                } while (old != assumed);
                if (i == n - 1)
                        atomicExch(last, i);
        }
        __syncthreads();
        for (unsigned b = threadIdx.x; b < 256; b += blockDim.x)
                if (local[b])
                        atomicAdd(&bins[b], local[b]);
}
