/* tiledispatch C API: the kernel registry of one built rule set, callable from C, ctypes and other languages.
 *
 * The counterpart of CK Tile Dispatcher's ctypes API (conv_dispatcher_init, _is_supported, _select_kernel,
 * _run, _get_kernel_count, _export_registry_json, _cleanup): every function here has the td_conv_ prefix and
 * the CK names are provided as aliases at the end of this header.
 *
 * Rules of the boundary:
 *  - No function aborts or lets a C++ exception escape. Each returns a td_status (TD_OK = 0) and, on failure,
 *    records a message for the calling thread, read with td_conv_last_error().
 *  - Nothing touches CUDA before the first td_conv_run(): init, listing, is_supported, select and the
 *    workspace query are host-only, so a process without a GPU (or a build worker) can use them.
 *  - Tensors are device pointers owned by the caller, in channels-last layouts: input NDHWGC (N, D, H, W, G,
 *    C/G), weight GKZYXC (G, K/G, Z, Y, X, C/G), output NDHWGK. 2D problems have D = Z = 1. The kernels need
 *    every pointer 16-byte aligned (TD_ALIGNMENT).
 *  - Strings returned by the library (names, instance strings, reasons, JSON) stay valid until the next
 *    td_conv_cleanup(); messages from td_conv_last_error() until the next call on the same thread.
 */
#ifndef TILEDISPATCH_C_API_H_
#define TILEDISPATCH_C_API_H_

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define TD_C_API __attribute__((visibility("default")))
#else
#define TD_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define TD_C_API_VERSION 2
#define TD_ALIGNMENT 16
/* td_conv_args.k_batch (and td_conv_workspace_size's k_batch) that leaves the split-K factor to the library:
 * td_conv_plan's factor for the instance on the device that runs it. */
#define TD_K_BATCH_AUTO (-1)

typedef enum td_status {
  TD_OK = 0,
  TD_ERROR_INVALID_ARGUMENT = 1,   /* a null pointer, a bad enum value, an index out of range */
  TD_ERROR_INVALID_PROBLEM = 2,    /* the problem fails its own validation (sizes, strides, overflow) */
  TD_ERROR_NOT_INITIALIZED = 3,    /* td_conv_init() was not called (or td_conv_cleanup() was) */
  TD_ERROR_UNKNOWN_KERNEL = 4,     /* no instance of that name */
  TD_ERROR_NOT_SUPPORTED = 5,      /* the instance cannot compute the problem; the message says why */
  TD_ERROR_NO_KERNEL = 6,          /* no instance supports the problem */
  TD_ERROR_BAD_ARGUMENTS = 7,      /* run arguments rejected: alignment, k_batch, workspace */
  TD_ERROR_CUDA = 8,               /* a CUDA call failed; the message names it */
  TD_ERROR_INTERNAL = 9            /* an unexpected C++ exception, caught at the boundary */
} td_status;

typedef enum td_direction { TD_FWD = 0, TD_BWD_DATA = 1, TD_BWD_WEIGHT = 2 } td_direction;
typedef enum td_dtype { TD_FP16 = 0, TD_BF16 = 1, TD_FP32 = 2 } td_dtype;

/* One grouped convolution. Spatial arrays are ordered D, H, W; a 2D problem has ndim_spatial 2, D extents 1
 * and D pads 0 (td_conv_problem_2d/3d fill them). Fields mirror tiledispatch::ConvProblem. */
typedef struct td_conv_problem {
  int32_t ndim_spatial;
  td_direction direction;
  td_dtype dtype;
  int64_t G, N, K, C;
  int64_t input[3];
  int64_t filter[3];
  int64_t stride[3];
  int64_t dilation[3];
  int64_t left_pad[3];
  int64_t right_pad[3];
} td_conv_problem;

/* What td_conv_kernel_info() reports for one instance. */
typedef struct td_kernel_info {
  const char* name;             /* kernel name, e.g. grouped_conv_fwd_fp16_nhwgc_2d_compv3_... */
  const char* instance_string;  /* CK's get_instance_string() */
  td_direction direction;
  td_dtype dtype;
  int32_t ndim_spatial;
  const char* family;           /* implicit_gemm | depthwise | streamk */
} td_kernel_info;

/* Device pointers and launch settings. fwd reads input+weight and writes output; bwd_data reads
 * output+weight and writes input; bwd_weight reads input+output and writes weight. `workspace` may be NULL
 * even when the kernel needs one: the library then allocates it stream-ordered (cudaMallocAsync/FreeAsync).
 * `k_batch` is the split-K factor (bwd_weight only; 0 or 1 means no split; TD_K_BATCH_AUTO: td_conv_plan's
 * choice on `device`, with the kernel when `name` is NULL). `stream` is a cudaStream_t
 * (NULL: the legacy default stream). `device` is the CUDA ordinal that owns the tensors (-1: current). */
typedef struct td_conv_args {
  void* input;
  void* weight;
  void* output;
  void* workspace;
  size_t workspace_bytes;
  int32_t k_batch;
  int32_t device;
  void* stream;
} td_conv_args;

/* The API version this library was built with (TD_C_API_VERSION). */
TD_C_API int td_conv_api_version(void);
/* The message of the calling thread's last failure ("" after a success). */
TD_C_API const char* td_conv_last_error(void);
/* A short name for a status code ("TD_ERROR_CUDA"). */
TD_C_API const char* td_conv_status_name(td_status status);

/* Registers every instance built into this library. Idempotent; makes no CUDA call. */
TD_C_API td_status td_conv_init(void);
/* Releases the registry and every string it handed out. td_conv_init() may be called again afterwards. */
TD_C_API td_status td_conv_cleanup(void);

TD_C_API td_status td_conv_get_kernel_count(size_t* count);
/* Instance `index` (0 <= index < count, ordered by name). */
TD_C_API td_status td_conv_kernel_info(size_t index, td_kernel_info* info);
/* The index of the instance named `name`, or TD_ERROR_UNKNOWN_KERNEL. */
TD_C_API td_status td_conv_find_kernel(const char* name, size_t* index);

/* TD_OK when the problem is well formed, else TD_ERROR_INVALID_PROBLEM with the reason naming the bad value. */
TD_C_API td_status td_conv_problem_validate(const td_conv_problem* problem);

/* Whether instance `name` computes `problem`: *supported is 1 or 0; when 0 and `reason` is not NULL,
 * *reason points to why (valid until the next call on this thread). A signature mismatch (direction,
 * dtype, ndim) is a reason like any other. */
TD_C_API td_status td_conv_is_supported(const char* name, const td_conv_problem* problem, int* supported,
                                        const char** reason);

/* The instance the selection picks for `problem` (docs/runtime.md, "Selection": the learned models compiled into
 * the library, ranking each kernel with its split-K candidates for 132 SMs): the name, valid until
 * td_conv_cleanup(). TD_ERROR_NO_KERNEL when no instance supports it. */
TD_C_API td_status td_conv_select_kernel(const td_conv_problem* problem, const char** name);

/* Bytes of device workspace instance `name` needs for `problem` with split-K factor `k_batch` (0 when none).
 * Stream-K instances, and Hopper-path bwd_weight instances on problems long enough to fold their accumulators
 * (docs/pipelines.md, "Accumulation"), size it by the current device's SM count: for them this query calls CUDA,
 * as does k_batch TD_K_BATCH_AUTO (the preferred factor on the current device). */
TD_C_API td_status td_conv_workspace_size(const char* name, const td_conv_problem* problem, int32_t k_batch,
                                          size_t* bytes);

/* The split-K factors instance `name` offers for `problem` on a GPU of `sms` multiprocessors (0: the current
 * device's count, a CUDA call): the candidates (ascending, the ones the profiler tries) go to `factors`, at most
 * `capacity` of them (`factors` may be NULL when `capacity` is 0), and their number to *count; *preferred is the
 * instance's own rule among them (the largest that keeps every work unit in one round on the SMs), what a run
 * takes where the models cannot rank (td_conv_plan). Directions other than bwd_weight, and instances that do
 * not split, offer {1}. TD_ERROR_NOT_SUPPORTED when the instance does not support `problem`. */
TD_C_API td_status td_conv_split_k(const char* name, const td_conv_problem* problem, int32_t sms, int32_t* preferred,
                                   int32_t* factors, size_t capacity, size_t* count);

/* What a run launches for `problem` on a GPU of `sms` multiprocessors (0: the current device's count, a CUDA
 * call): instance `name` (NULL: the one the selection ranks first) and its split-K factor, the (kernel, factor)
 * pair the compiled-in models rank first (docs/runtime.md, "Split-K"). *chosen is valid until
 * td_conv_cleanup(). Plans are memoised per problem, kernel and SM count. TD_ERROR_NOT_SUPPORTED when `name`
 * does not support the problem, TD_ERROR_NO_KERNEL when none does. */
TD_C_API td_status td_conv_plan(const char* name, const td_conv_problem* problem, int32_t sms, const char** chosen,
                                int32_t* k_batch);

/* The multiprocessor count of CUDA device `device` (-1: the current device). A CUDA call. */
TD_C_API td_status td_conv_device_sm_count(int32_t device, int32_t* sms);

/* Runs `problem` with instance `name` (NULL: the selected one) on `args`. Asynchronous on args->stream:
 * returns once the kernel is launched. Checks support, alignment and the workspace before any launch. */
TD_C_API td_status td_conv_run(const char* name, const td_conv_problem* problem, const td_conv_args* args);

/* The whole registry as JSON: {"api_version":1,"kernel_count":n,"kernels":[{"name","instance_string",
 * "direction","dtype","ndim_spatial","family"}...]}. Valid until td_conv_cleanup(). */
TD_C_API td_status td_conv_export_registry_json(const char** json);

/* CK Tile Dispatcher names, exported as real symbols (not macros) so that ctypes users of CK find them. Each
 * forwards to the td_conv_ function of the same suffix. */
TD_C_API td_status conv_dispatcher_init(void);
TD_C_API td_status conv_dispatcher_cleanup(void);
TD_C_API td_status conv_dispatcher_get_kernel_count(size_t* count);
TD_C_API td_status conv_dispatcher_is_supported(const char* name, const td_conv_problem* problem, int* supported,
                                                const char** reason);
TD_C_API td_status conv_dispatcher_select_kernel(const td_conv_problem* problem, const char** name);
TD_C_API td_status conv_dispatcher_run(const char* name, const td_conv_problem* problem, const td_conv_args* args);
TD_C_API td_status conv_dispatcher_export_registry_json(const char** json);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* TILEDISPATCH_C_API_H_ */
