// TD_HOST_DEVICE: functions the kernels and the host (tests, launch set-up) both call, inlined on the device.
#pragma once

#if defined(__CUDACC__)
#define TD_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TD_HOST_DEVICE inline
#endif
