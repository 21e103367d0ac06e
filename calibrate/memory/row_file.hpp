// What a memory-bound kernel's row file (memory/<kernel>.cu) includes: the row's types, the FP64
// comparison its checks judge by and, under nvcc, the device helpers its kernels share.
#pragma once

#include "calibrate/core/reference.hpp"
#include "calibrate/memory/memory_kernel.hpp"

#ifdef __CUDACC__
#include "calibrate/memory/device.cuh"
#endif
