// rs2gpu_driver.rs: part of rs2gpu, copied unchanged beside every generated kernel module (whose first line
// names the rs2gpu version). Do not edit the copy: change this file in rs2gpu.
//
// The CUDA driver (libcuda) and NVRTC, loaded when a program first asks for a GPU (dlopen/dlsym), so a crate
// that uses the kernels builds on machines without a GPU toolkit; plus the disk cache of compiled kernels.
// Every call's status is checked and turned into an `Error`.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::Error;

pub(super) type CuResult = c_int;
pub(super) type CuDevice = c_int;
pub(super) type CuContext = *mut c_void;
pub(super) type CuModule = *mut c_void;
pub(super) type CuFunction = *mut c_void;
pub(super) type CuStream = *mut c_void;
pub(super) type CuDevicePtr = u64;

const CUDA_SUCCESS: CuResult = 0;
const CUDA_ERROR_NO_DEVICE: CuResult = 100;
const CUDA_ERROR_INSUFFICIENT_DRIVER: CuResult = 35;
const CUDA_ERROR_NOT_READY: CuResult = 600;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;
const CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: c_int = 16;
const CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: c_int = 38;
const CU_MEMHOSTALLOC_DEVICEMAP: c_uint = 0x02;

// ------------------------------------------------------------------ shared libraries

#[cfg(unix)]
mod dl {
    use std::ffi::{c_char, c_int, c_void};

    pub const RTLD_NOW: c_int = 2;

    #[cfg_attr(target_os = "linux", link(name = "dl"))]
    unsafe extern "C" {
        pub fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
        pub fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
        pub fn dlerror() -> *mut c_char;
    }
}

/// A shared library opened for the life of the process (never closed: the driver keeps state in it).
struct Library {
    handle: *mut c_void,
    path: String,
}

// SAFETY: a dlopen handle may be used from any thread; the library is never closed.
unsafe impl Send for Library {}
unsafe impl Sync for Library {}

impl Library {
    /// The first of `candidates` (file names for the loader's search, or paths) that opens; otherwise
    /// every attempt and why it failed.
    #[cfg(unix)]
    fn open_first(candidates: &[String]) -> Result<Library, String> {
        let mut failures = Vec::new();
        for candidate in candidates {
            let Ok(name) = CString::new(candidate.as_str()) else { continue };
            // SAFETY: `name` is a NUL-terminated string; dlopen has no other preconditions.
            let handle = unsafe { dl::dlopen(name.as_ptr(), dl::RTLD_NOW) };
            if !handle.is_null() {
                return Ok(Library { handle, path: candidate.clone() });
            }
            failures.push(last_dl_error().unwrap_or_else(|| format!("{candidate}: not found")));
        }
        Err(failures.join("\n  "))
    }

    #[cfg(not(unix))]
    fn open_first(_candidates: &[String]) -> Result<Library, String> {
        Err("rs2gpu loads the GPU driver with dlopen, which this platform does not have".to_string())
    }

    /// The address of `name` as a function pointer of type `F`.
    ///
    /// SAFETY (for the caller): `F` must be the `unsafe extern "C" fn` type of the symbol's C declaration.
    #[cfg(unix)]
    unsafe fn symbol<F: Copy>(&self, name: &str) -> Result<F, String> {
        assert_eq!(size_of::<F>(), size_of::<*mut c_void>(), "a symbol is loaded as a function pointer");
        let c_name = CString::new(name).map_err(|_| format!("bad symbol name {name}"))?;
        // SAFETY: the handle is open, and `c_name` is NUL-terminated.
        let address = unsafe { dl::dlsym(self.handle, c_name.as_ptr()) };
        if address.is_null() {
            return Err(format!("{} has no symbol `{name}`", self.path));
        }
        // SAFETY: the caller names the symbol's type; both are pointer-sized.
        Ok(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&address) })
    }

    #[cfg(not(unix))]
    unsafe fn symbol<F: Copy>(&self, name: &str) -> Result<F, String> {
        Err(format!("no symbol `{name}`"))
    }
}

#[cfg(unix)]
fn last_dl_error() -> Option<String> {
    // SAFETY: dlerror returns NULL or a NUL-terminated message owned by the loader.
    let message = unsafe { dl::dlerror() };
    if message.is_null() {
        return None;
    }
    // SAFETY: checked non-NULL above; the text is copied before any other dl call.
    Some(unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned())
}

/// Loads each listed symbol into the struct field of the same name, with the field's function type.
macro_rules! load_symbols {
    ($library:expr, $table:ident { $($field:ident = $symbol:literal),* $(,)? } $(, $($rest:tt)*)?) => {
        // SAFETY: each field's type is the C declaration of the symbol it is loaded from.
        $table { $($field: unsafe { $library.symbol($symbol)? },)* $($($rest)*)? }
    };
}

// ------------------------------------------------------------------ the CUDA driver

/// The functions of the CUDA driver API that the kernels use (the `_v2` entry points are the current ones).
pub(super) struct Cuda {
    library: Library,
    init: unsafe extern "C" fn(c_uint) -> CuResult,
    driver_get_version: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_get_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    device_get: unsafe extern "C" fn(*mut CuDevice, c_int) -> CuResult,
    device_get_name: unsafe extern "C" fn(*mut c_char, c_int, CuDevice) -> CuResult,
    device_get_attribute: unsafe extern "C" fn(*mut c_int, c_int, CuDevice) -> CuResult,
    primary_ctx_retain: unsafe extern "C" fn(*mut CuContext, CuDevice) -> CuResult,
    primary_ctx_release: unsafe extern "C" fn(CuDevice) -> CuResult,
    ctx_set_current: unsafe extern "C" fn(CuContext) -> CuResult,
    ctx_synchronize: unsafe extern "C" fn() -> CuResult,
    stream_query: unsafe extern "C" fn(CuStream) -> CuResult,
    stream_create: unsafe extern "C" fn(*mut CuStream, c_uint) -> CuResult,
    stream_destroy: unsafe extern "C" fn(CuStream) -> CuResult,
    stream_synchronize: unsafe extern "C" fn(CuStream) -> CuResult,
    module_load_data: unsafe extern "C" fn(*mut CuModule, *const c_void) -> CuResult,
    module_unload: unsafe extern "C" fn(CuModule) -> CuResult,
    module_get_function: unsafe extern "C" fn(*mut CuFunction, CuModule, *const c_char) -> CuResult,
    module_get_global: unsafe extern "C" fn(*mut CuDevicePtr, *mut usize, CuModule, *const c_char) -> CuResult,
    mem_alloc: unsafe extern "C" fn(*mut CuDevicePtr, usize) -> CuResult,
    mem_free: unsafe extern "C" fn(CuDevicePtr) -> CuResult,
    memcpy_htod: unsafe extern "C" fn(CuDevicePtr, *const c_void, usize) -> CuResult,
    memcpy_dtoh: unsafe extern "C" fn(*mut c_void, CuDevicePtr, usize) -> CuResult,
    memset_d8: unsafe extern "C" fn(CuDevicePtr, u8, usize) -> CuResult,
    mem_host_alloc: unsafe extern "C" fn(*mut *mut c_void, usize, c_uint) -> CuResult,
    mem_host_get_device_pointer: unsafe extern "C" fn(*mut CuDevicePtr, *mut c_void, c_uint) -> CuResult,
    mem_free_host: unsafe extern "C" fn(*mut c_void) -> CuResult,
    #[allow(clippy::type_complexity)]
    launch_kernel: unsafe extern "C" fn(
        CuFunction, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, CuStream,
        *mut *mut c_void, *mut *mut c_void,
    ) -> CuResult,
    get_error_name: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    get_error_string: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    /// Absent before CUDA 12.4; used to confirm each kernel's parameter sizes when present.
    func_get_param_info: Option<unsafe extern "C" fn(CuFunction, usize, *mut usize, *mut usize) -> CuResult>,
}

static CUDA: OnceLock<Result<Cuda, Error>> = OnceLock::new();

/// The CUDA driver, loaded and initialised once per process.
pub(super) fn cuda() -> Result<&'static Cuda, Error> {
    CUDA.get_or_init(load_cuda).as_ref().map_err(Clone::clone)
}

fn load_cuda() -> Result<Cuda, Error> {
    let candidates: Vec<String> = ["libcuda.so.1", "libcuda.so", "/usr/lib/wsl/lib/libcuda.so.1"]
        .iter().map(|s| s.to_string()).collect();
    let library = Library::open_first(&candidates).map_err(|tried| {
        Error::Unavailable(format!("the CUDA driver (libcuda.so.1) is not installed here:\n  {tried}"))
    })?;
    let load = |library: Library| -> Result<Cuda, String> {
        // SAFETY: the optional symbol has the C declaration of cuFuncGetParamInfo.
        let func_get_param_info = unsafe { library.symbol("cuFuncGetParamInfo") }.ok();
        Ok(load_symbols!(library, Cuda {
            init = "cuInit",
            driver_get_version = "cuDriverGetVersion",
            device_get_count = "cuDeviceGetCount",
            device_get = "cuDeviceGet",
            device_get_name = "cuDeviceGetName",
            device_get_attribute = "cuDeviceGetAttribute",
            primary_ctx_retain = "cuDevicePrimaryCtxRetain",
            primary_ctx_release = "cuDevicePrimaryCtxRelease_v2",
            ctx_set_current = "cuCtxSetCurrent",
            ctx_synchronize = "cuCtxSynchronize",
            stream_query = "cuStreamQuery",
            stream_create = "cuStreamCreate",
            stream_destroy = "cuStreamDestroy_v2",
            stream_synchronize = "cuStreamSynchronize",
            module_load_data = "cuModuleLoadData",
            module_unload = "cuModuleUnload",
            module_get_function = "cuModuleGetFunction",
            module_get_global = "cuModuleGetGlobal_v2",
            mem_alloc = "cuMemAlloc_v2",
            mem_free = "cuMemFree_v2",
            memcpy_htod = "cuMemcpyHtoD_v2",
            memcpy_dtoh = "cuMemcpyDtoH_v2",
            memset_d8 = "cuMemsetD8_v2",
            mem_host_alloc = "cuMemHostAlloc",
            mem_host_get_device_pointer = "cuMemHostGetDevicePointer_v2",
            mem_free_host = "cuMemFreeHost",
            launch_kernel = "cuLaunchKernel",
            get_error_name = "cuGetErrorName",
            get_error_string = "cuGetErrorString",
        }, func_get_param_info, library))
    };
    let cuda = load(library).map_err(|e| Error::Unavailable(format!("the CUDA driver is too old: {e}")))?;
    // SAFETY: cuInit takes flags that must be 0.
    let status = unsafe { (cuda.init)(0) };
    if status == CUDA_ERROR_NO_DEVICE || status == CUDA_ERROR_INSUFFICIENT_DRIVER {
        return Err(Error::Unavailable(format!("cuInit: {}", cuda.describe(status))));
    }
    cuda.check(status, "cuInit")?;
    Ok(cuda)
}

/// The architecture a device of compute capability major.minor compiles for: its own, with Hopper's
/// architecture-specific features (`sm_90a`: the warpgroup products of the tensor-core tiles), as the Python
/// runtime's `device_arch` says.
fn device_arch(major: c_int, minor: c_int) -> String {
    format!("sm_{major}{minor}{}", if (major, minor) == (9, 0) { "a" } else { "" })
}

/// A device's primary context, made current on the calling thread by `enter`.
pub(super) struct DeviceContext {
    pub(super) device: CuDevice,
    pub(super) context: CuContext,
    pub(super) name: String,
    pub(super) arch: String,
    pub(super) driver_version: i32,
    /// The streaming multiprocessors (SMs), which size the grids of launches with reductions.
    pub(super) multiprocessors: u32,
    /// The bytes of its L2 cache: a loop whose slice elements fit there runs its L2-adds entry point.
    pub(super) l2_bytes: u64,
}

impl Cuda {
    /// The error name and text the driver gives for `status`, e.g. "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
    fn describe(&self, status: CuResult) -> String {
        let mut name: *const c_char = std::ptr::null();
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: both calls only write a pointer to a static string (or leave it NULL for unknown codes).
        unsafe {
            (self.get_error_name)(status, &mut name);
            (self.get_error_string)(status, &mut text);
        }
        let read = |p: *const c_char| if p.is_null() { None } else {
            // SAFETY: non-NULL results point to static NUL-terminated strings.
            Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        };
        match (read(name), read(text)) {
            (Some(name), Some(text)) => format!("{name} ({text})"),
            (Some(name), None) => name,
            _ => format!("CUDA error {status}"),
        }
    }

    /// `Ok` for CUDA_SUCCESS, otherwise the error of `call`.
    pub(super) fn check(&self, status: CuResult, call: &'static str) -> Result<(), Error> {
        if status == CUDA_SUCCESS {
            Ok(())
        } else {
            Err(Error::Driver { call, code: status, message: self.describe(status), context: String::new() })
        }
    }

    /// Opens device `ordinal` (its primary context) and reads its name and compute capability.
    pub(super) fn open_device(&self, ordinal: usize) -> Result<DeviceContext, Error> {
        let mut count: c_int = 0;
        // SAFETY: writes one int.
        self.check(unsafe { (self.device_get_count)(&mut count) }, "cuDeviceGetCount")?;
        if ordinal >= count.max(0) as usize {
            return Err(Error::Unavailable(format!("no CUDA device {ordinal}: this machine has {count}")));
        }
        let mut device: CuDevice = 0;
        // SAFETY: writes one device handle; the ordinal is in range.
        self.check(unsafe { (self.device_get)(&mut device, ordinal as c_int) }, "cuDeviceGet")?;
        let mut name = [0 as c_char; 256];
        // SAFETY: the buffer holds `len` bytes; the driver NUL-terminates the name.
        self.check(unsafe { (self.device_get_name)(name.as_mut_ptr(), name.len() as c_int, device) },
                   "cuDeviceGetName")?;
        // SAFETY: NUL-terminated by the call above (and the buffer was zeroed).
        let name = unsafe { CStr::from_ptr(name.as_ptr()) }.to_string_lossy().into_owned();
        let (mut major, mut minor, mut multiprocessors, mut l2_bytes) = (0, 0, 0, 0);
        // SAFETY: each call writes one int.
        unsafe {
            self.check((self.device_get_attribute)(&mut major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
                       "cuDeviceGetAttribute")?;
            self.check((self.device_get_attribute)(&mut minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device),
                       "cuDeviceGetAttribute")?;
            self.check((self.device_get_attribute)(&mut multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                                   device), "cuDeviceGetAttribute")?;
            self.check((self.device_get_attribute)(&mut l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device),
                       "cuDeviceGetAttribute")?;
        }
        let mut driver_version = 0;
        // SAFETY: writes one int.
        self.check(unsafe { (self.driver_get_version)(&mut driver_version) }, "cuDriverGetVersion")?;
        let mut context: CuContext = std::ptr::null_mut();
        // SAFETY: writes one context handle, released in `close_device`.
        self.check(unsafe { (self.primary_ctx_retain)(&mut context, device) }, "cuDevicePrimaryCtxRetain")?;
        let opened = DeviceContext { device, context, name, arch: device_arch(major, minor), driver_version,
                                     multiprocessors: multiprocessors.max(1) as u32,
                                     l2_bytes: l2_bytes.max(0) as u64 };
        self.enter(&opened)?;
        Ok(opened)
    }

    pub(super) fn close_device(&self, device: &DeviceContext) {
        // SAFETY: the primary context was retained once in `open_device`. Nothing can report an error here.
        unsafe { (self.primary_ctx_release)(device.device) };
    }

    /// Makes the device's context current on this thread (cheap; done before every driver call).
    pub(super) fn enter(&self, device: &DeviceContext) -> Result<(), Error> {
        // SAFETY: the context is retained while `device` lives.
        self.check(unsafe { (self.ctx_set_current)(device.context) }, "cuCtxSetCurrent")
    }

    pub(super) fn synchronize(&self) -> Result<(), Error> {
        // SAFETY: no arguments.
        self.check(unsafe { (self.ctx_synchronize)() }, "cuCtxSynchronize")
    }

    /// Waits for the work of `stream` (null: the default stream).
    pub(super) fn synchronize_stream(&self, stream: CuStream) -> Result<(), Error> {
        // SAFETY: as in `finished`.
        self.check(unsafe { (self.stream_synchronize)(stream) }, "cuStreamSynchronize")
    }

    /// A new stream of the current context. It is a blocking stream: the default stream's work (the copies
    /// of `DeviceBuffer`s) waits for its work before it, and its work for the default stream's.
    pub(super) fn create_stream(&self) -> Result<CuStream, Error> {
        let mut stream: CuStream = std::ptr::null_mut();
        // SAFETY: writes one stream handle; flags 0 is CU_STREAM_DEFAULT.
        self.check(unsafe { (self.stream_create)(&mut stream, 0) }, "cuStreamCreate")?;
        Ok(stream)
    }

    /// SAFETY (for the caller): `stream` came from `create_stream` and is not used afterwards (work queued
    /// on it still runs to its end).
    pub(super) unsafe fn destroy_stream(&self, stream: CuStream) {
        // SAFETY: the caller's contract. Nothing can report an error here.
        unsafe { (self.stream_destroy)(stream) };
    }

    /// Whether the work of `stream` (null: the default stream) has finished (`false` while it runs), or
    /// the error of a launch that failed.
    pub(super) fn finished(&self, stream: CuStream) -> Result<bool, Error> {
        // SAFETY: the stream is the context's default one or one `create_stream` made and not yet destroyed.
        let status = unsafe { (self.stream_query)(stream) };
        if status == CUDA_ERROR_NOT_READY {
            return Ok(false);
        }
        self.check(status, "cuStreamQuery").map(|()| true)
    }

    pub(super) fn alloc(&self, bytes: usize) -> Result<CuDevicePtr, Error> {
        let mut ptr: CuDevicePtr = 0;
        // SAFETY: writes one device pointer, freed by `free`.
        self.check(unsafe { (self.mem_alloc)(&mut ptr, bytes) }, "cuMemAlloc")?;
        Ok(ptr)
    }

    /// SAFETY (for the caller): `ptr` came from `alloc` and is freed once.
    pub(super) unsafe fn free(&self, ptr: CuDevicePtr) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        self.check(unsafe { (self.mem_free)(ptr) }, "cuMemFree")
    }

    /// `bytes` of zeroed page-locked host memory that kernels write directly: its host address and the
    /// address device code uses for it, freed by `free_mapped`.
    pub(super) fn alloc_mapped(&self, bytes: usize) -> Result<(*mut u64, CuDevicePtr), Error> {
        let mut host: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one host pointer to `bytes` bytes, mapped into the device's address space.
        self.check(unsafe { (self.mem_host_alloc)(&mut host, bytes, CU_MEMHOSTALLOC_DEVICEMAP) }, "cuMemHostAlloc")?;
        let mut device: CuDevicePtr = 0;
        // SAFETY: `host` was allocated mapped just above; writes one device pointer.
        let status = unsafe { (self.mem_host_get_device_pointer)(&mut device, host, 0) };
        if let Err(e) = self.check(status, "cuMemHostGetDevicePointer") {
            // SAFETY: allocated above and not used elsewhere.
            unsafe { (self.mem_free_host)(host) };
            return Err(e);
        }
        // SAFETY: the allocation holds `bytes` bytes.
        unsafe { std::ptr::write_bytes(host.cast::<u8>(), 0, bytes) };
        Ok((host.cast::<u64>(), device))
    }

    /// SAFETY (for the caller): `host` came from `alloc_mapped`, no launch still writes it, and it is freed once.
    pub(super) unsafe fn free_mapped(&self, host: *mut u64) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        self.check(unsafe { (self.mem_free_host)(host.cast::<c_void>()) }, "cuMemFreeHost")
    }

    /// SAFETY (for the caller): `src` is readable for `bytes` bytes and `dst` is device memory of at least that size.
    pub(super) unsafe fn upload(&self, dst: CuDevicePtr, src: *const c_void, bytes: usize) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        self.check(unsafe { (self.memcpy_htod)(dst, src, bytes) }, "cuMemcpyHtoD")
    }

    /// Waits for the earlier launches (the default stream orders them), then copies.
    ///
    /// SAFETY (for the caller): `dst` is writable for `bytes` bytes and `src` is device memory of at least that size.
    pub(super) unsafe fn download(&self, dst: *mut c_void, src: CuDevicePtr, bytes: usize) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        self.check(unsafe { (self.memcpy_dtoh)(dst, src, bytes) }, "cuMemcpyDtoH")
    }

    /// SAFETY (for the caller): `dst` is device memory of at least `bytes` bytes.
    pub(super) unsafe fn zero(&self, dst: CuDevicePtr, bytes: usize) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        self.check(unsafe { (self.memset_d8)(dst, 0, bytes) }, "cuMemsetD8")
    }

    pub(super) fn load_module(&self, image: &[u8]) -> Result<CuModule, Error> {
        let mut module: CuModule = std::ptr::null_mut();
        // SAFETY: `image` is a whole cubin; the driver copies what it needs.
        self.check(unsafe { (self.module_load_data)(&mut module, image.as_ptr().cast()) }, "cuModuleLoadData")?;
        Ok(module)
    }

    /// SAFETY (for the caller): `module` came from `load_module`, its functions are no longer used, and it is
    /// unloaded once.
    pub(super) unsafe fn unload_module(&self, module: CuModule) {
        // SAFETY: the caller's contract. Nothing can report an error here.
        unsafe { (self.module_unload)(module) };
    }

    pub(super) fn function(&self, module: CuModule, symbol: &str) -> Result<CuFunction, Error> {
        let name = CString::new(symbol).map_err(|_| Error::Abi(format!("bad kernel symbol {symbol:?}")))?;
        let mut function: CuFunction = std::ptr::null_mut();
        // SAFETY: `module` is loaded and `name` NUL-terminated.
        self.check(unsafe { (self.module_get_function)(&mut function, module, name.as_ptr()) },
                   "cuModuleGetFunction")?;
        Ok(function)
    }

    /// The device address of the module variable `name`.
    pub(super) fn global(&self, module: CuModule, name: &str) -> Result<CuDevicePtr, Error> {
        let c_name = CString::new(name).map_err(|_| Error::Abi(format!("bad variable name {name:?}")))?;
        let (mut ptr, mut size): (CuDevicePtr, usize) = (0, 0);
        // SAFETY: `module` is loaded and `c_name` NUL-terminated; writes a pointer and a size.
        self.check(unsafe { (self.module_get_global)(&mut ptr, &mut size, module, c_name.as_ptr()) },
                   "cuModuleGetGlobal")?;
        Ok(ptr)
    }

    /// The byte size of each parameter of `function`, where the driver can tell (CUDA 12.4 and later).
    pub(super) fn parameter_sizes(&self, function: CuFunction) -> Option<Vec<usize>> {
        let info = self.func_get_param_info?;
        let mut sizes = Vec::new();
        loop {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: writes two size_t; an index past the last parameter returns an error status.
            if unsafe { info(function, sizes.len(), &mut offset, &mut size) } != CUDA_SUCCESS {
                return Some(sizes);
            }
            sizes.push(size);
        }
    }

    /// Launches `function` on `stream` (null: the default stream); `params` points at one pointer per
    /// kernel parameter.
    ///
    /// SAFETY (for the caller): each pointer in `params` points at a value of the parameter's exact size;
    /// the stream is as in `finished`.
    pub(super) unsafe fn launch(&self, function: CuFunction, grid: [u32; 3], block: [u32; 3],
                                params: &mut [*mut c_void], stream: CuStream) -> Result<(), Error> {
        // SAFETY: the caller's contract; no shared memory, no `extra` block.
        let status = unsafe {
            (self.launch_kernel)(function, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0,
                                 stream, params.as_mut_ptr(), std::ptr::null_mut())
        };
        self.check(status, "cuLaunchKernel")
    }

    pub(super) fn library_path(&self) -> &str {
        &self.library.path
    }
}

// ------------------------------------------------------------------ NVRTC

type NvrtcProgram = *mut c_void;

struct Nvrtc {
    library: Library,
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int,
    create_program: unsafe extern "C" fn(
        *mut NvrtcProgram, *const c_char, *const c_char, c_int, *const *const c_char, *const *const c_char,
    ) -> c_int,
    compile_program: unsafe extern "C" fn(NvrtcProgram, c_int, *const *const c_char) -> c_int,
    get_program_log_size: unsafe extern "C" fn(NvrtcProgram, *mut usize) -> c_int,
    get_program_log: unsafe extern "C" fn(NvrtcProgram, *mut c_char) -> c_int,
    get_cubin_size: unsafe extern "C" fn(NvrtcProgram, *mut usize) -> c_int,
    get_cubin: unsafe extern "C" fn(NvrtcProgram, *mut c_char) -> c_int,
    destroy_program: unsafe extern "C" fn(*mut NvrtcProgram) -> c_int,
    get_error_string: unsafe extern "C" fn(c_int) -> *const c_char,
}

static NVRTC: OnceLock<Result<Nvrtc, Error>> = OnceLock::new();

/// Where NVRTC may be: `$RS2GPU_NVRTC` (the library, or its folder), the loader's search path, the CUDA
/// toolkit's usual folders, and the lib folder of the `nvidia-cuda-nvrtc` Python wheel in the usual
/// Python prefixes.
fn nvrtc_candidates() -> Vec<String> {
    const NAMES: [&str; 3] = ["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"];
    let mut out = Vec::new();
    let in_folder = |folder: &Path, out: &mut Vec<String>| {
        for name in NAMES {
            let path = folder.join(name);
            if path.exists() {
                out.push(path.to_string_lossy().into_owned());
            }
        }
    };
    if let Some(value) = std::env::var_os("RS2GPU_NVRTC").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(value);
        if path.is_dir() {
            // the library's folder, or the `nvidia` folder of the Python wheels (nvidia/cu13/lib, ...)
            for folder in [path.clone(), path.join("cu13/lib"), path.join("cuda_nvrtc/lib"), path.join("lib")] {
                in_folder(&folder, &mut out);
            }
        } else {
            out.push(path.to_string_lossy().into_owned());
        }
    }
    out.extend(NAMES.iter().map(|name| name.to_string()));
    let mut folders: Vec<PathBuf> = Vec::new();
    for variable in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(variable) {
            folders.push(Path::new(&root).join("lib64"));
        }
    }
    let target = format!("/usr/local/cuda/targets/{}-linux/lib", std::env::consts::ARCH);
    folders.extend(["/usr/local/cuda/lib64", target.as_str(), "/opt/cuda/lib64"].map(PathBuf::from));
    let mut prefixes: Vec<PathBuf> = ["VIRTUAL_ENV", "CONDA_PREFIX"].iter()
        .filter_map(std::env::var_os).map(PathBuf::from).collect();
    if let Some(home) = std::env::var_os("HOME") {
        prefixes.push(Path::new(&home).join(".local"));
    }
    prefixes.extend(["/usr/local", "/usr"].map(PathBuf::from));
    for prefix in prefixes {
        let Ok(entries) = std::fs::read_dir(prefix.join("lib")) else { continue };
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with("python3") {
                for packages in ["site-packages", "dist-packages"] {
                    let nvidia = entry.path().join(packages).join("nvidia");
                    folders.push(nvidia.join("cu13").join("lib"));
                    folders.push(nvidia.join("cuda_nvrtc").join("lib"));
                }
            }
        }
    }
    for folder in folders {
        in_folder(&folder, &mut out);
    }
    out
}

fn nvrtc() -> Result<&'static Nvrtc, Error> {
    NVRTC.get_or_init(load_nvrtc).as_ref().map_err(Clone::clone)
}

fn load_nvrtc() -> Result<Nvrtc, Error> {
    let library = Library::open_first(&nvrtc_candidates()).map_err(|tried| Error::Unavailable(format!(
        "NVRTC (libnvrtc.so.13), which compiles the kernels at run time, was not found:\n  {tried}\n\
         Install it (pip install nvidia-cuda-nvrtc) and set RS2GPU_NVRTC to the library or its folder."
    )))?;
    let loaded = (|| -> Result<Nvrtc, String> {
        Ok(load_symbols!(library, Nvrtc {
            version = "nvrtcVersion",
            create_program = "nvrtcCreateProgram",
            compile_program = "nvrtcCompileProgram",
            get_program_log_size = "nvrtcGetProgramLogSize",
            get_program_log = "nvrtcGetProgramLog",
            get_cubin_size = "nvrtcGetCUBINSize",
            get_cubin = "nvrtcGetCUBIN",
            destroy_program = "nvrtcDestroyProgram",
            get_error_string = "nvrtcGetErrorString",
        }, library))
    })();
    loaded.map_err(|e| Error::Unavailable(format!("this NVRTC cannot compile to cubins: {e}")))
}

impl Nvrtc {
    fn describe(&self, status: c_int) -> String {
        // SAFETY: returns a static NUL-terminated string for any status.
        let text = unsafe { (self.get_error_string)(status) };
        if text.is_null() {
            format!("NVRTC error {status}")
        } else {
            // SAFETY: checked non-NULL above.
            unsafe { CStr::from_ptr(text) }.to_string_lossy().into_owned()
        }
    }

    fn check(&self, status: c_int, call: &'static str) -> Result<(), Error> {
        if status == 0 {
            Ok(())
        } else {
            Err(Error::Driver { call, code: status, message: self.describe(status), context: String::new() })
        }
    }

    fn version(&self) -> String {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: writes two ints.
        unsafe { (self.version)(&mut major, &mut minor) };
        format!("{major}.{minor}")
    }

    /// Compiles `source` to a cubin; on failure the error carries NVRTC's log.
    fn compile(&self, kernel: &'static str, file: &str, source: &str, options: &[String]) -> Result<Vec<u8>, Error> {
        let source_c = CString::new(source).map_err(|_| Error::Abi(format!("{file} contains a NUL byte")))?;
        let file_c = CString::new(file).map_err(|_| Error::Abi(format!("bad file name {file:?}")))?;
        let options_c: Vec<CString> = options.iter().map(|o| CString::new(o.as_str()).expect("plain option")).collect();
        let option_ptrs: Vec<*const c_char> = options_c.iter().map(|o| o.as_ptr()).collect();
        let mut program: NvrtcProgram = std::ptr::null_mut();
        // SAFETY: NUL-terminated source and name, no headers.
        self.check(unsafe {
            (self.create_program)(&mut program, source_c.as_ptr(), file_c.as_ptr(), 0, std::ptr::null(),
                                  std::ptr::null())
        }, "nvrtcCreateProgram")?;
        // SAFETY: `program` was created above and `option_ptrs` outlives the call.
        let status = unsafe { (self.compile_program)(program, option_ptrs.len() as c_int, option_ptrs.as_ptr()) };
        let result = if status == 0 {
            self.cubin(program)
        } else {
            Err(Error::Compile {
                kernel,
                message: format!("NVRTC {} could not compile {file} ({}) with {}", self.version(),
                                 self.describe(status), options.join(" ")),
                log: self.log(program),
            })
        };
        // SAFETY: destroys the program created above, once.
        unsafe { (self.destroy_program)(&mut program) };
        result
    }

    fn log(&self, program: NvrtcProgram) -> String {
        let mut size = 0usize;
        // SAFETY: writes one size_t.
        if unsafe { (self.get_program_log_size)(program, &mut size) } != 0 || size == 0 {
            return String::new();
        }
        let mut log = vec![0u8; size];
        // SAFETY: the buffer holds the `size` bytes NVRTC asked for.
        unsafe { (self.get_program_log)(program, log.as_mut_ptr().cast()) };
        String::from_utf8_lossy(&log).trim_end_matches('\0').trim_end().to_string()
    }

    fn cubin(&self, program: NvrtcProgram) -> Result<Vec<u8>, Error> {
        let mut size = 0usize;
        // SAFETY: writes one size_t.
        self.check(unsafe { (self.get_cubin_size)(program, &mut size) }, "nvrtcGetCUBINSize")?;
        let mut cubin = vec![0u8; size];
        // SAFETY: the buffer holds the `size` bytes NVRTC asked for.
        self.check(unsafe { (self.get_cubin)(program, cubin.as_mut_ptr().cast()) }, "nvrtcGetCUBIN")?;
        Ok(cubin)
    }
}

// ------------------------------------------------------------------ compiling, with an in-process and a disk cache

/// FNV-1a, 64 bits: the cache key of a compile (source, architecture and options).
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in (part.len() as u64).to_le_bytes().iter().chain(part.iter()) {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

/// `$RS2GPU_CACHE_DIR/rust`, else `$XDG_CACHE_HOME/rs2gpu/rust`, else `~/.cache/rs2gpu/rust`;
/// `RS2GPU_CACHE_DIR=off` turns the disk cache off.
fn cache_folder() -> Option<PathBuf> {
    let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(root) = env("RS2GPU_CACHE_DIR") {
        return if root == "off" { None } else { Some(Path::new(&root).join("rust")) };
    }
    let base = env("XDG_CACHE_HOME").map(PathBuf::from).or_else(|| env("HOME").map(|h| Path::new(&h).join(".cache")))?;
    Some(base.join("rs2gpu").join("rust"))
}

/// A cache entry is the cubin followed by its own FNV-1a hash, so a truncated or damaged file is a miss.
fn read_cached(path: &Path) -> Option<Vec<u8>> {
    let mut data = std::fs::read(path).ok()?;
    if data.len() < 8 {
        return None;
    }
    let trailer = data.split_off(data.len() - 8);
    (trailer == fnv1a(&[&data]).to_le_bytes()).then_some(data)
}

/// Best effort: a cache that cannot be written costs a compile next time, nothing more.
fn write_cached(path: &Path, cubin: &[u8]) {
    let Some(folder) = path.parent() else { return };
    if std::fs::create_dir_all(folder).is_err() {
        return;
    }
    let temporary = folder.join(format!(".tmp-{}-{:?}", std::process::id(), std::thread::current().id()));
    let mut data = cubin.to_vec();
    data.extend_from_slice(&fnv1a(&[cubin]).to_le_bytes());
    if std::fs::write(&temporary, &data).is_ok() && std::fs::rename(&temporary, path).is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
}

static COMPILED: Mutex<Option<HashMap<u64, std::sync::Arc<Vec<u8>>>>> = Mutex::new(None);

/// The cubin of `source` for `arch`: from this process's memory, the disk cache, or NVRTC (which is only
/// loaded when something must be compiled).
pub(super) fn compile_cuda(kernel: &'static str, file: &str, source: &str, arch: &str, fast_math: bool)
    -> Result<std::sync::Arc<Vec<u8>>, Error> {
    let options = vec![format!("-arch={arch}"), "--std=c++17".to_string(),
                       format!("--fmad={}", if fast_math { "true" } else { "false" })];
    let key = fnv1a(&[b"rs2gpu cubin 1", source.as_bytes(), options.join(" ").as_bytes()]);
    if let Some(cubin) = COMPILED.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(HashMap::new).get(&key) {
        return Ok(cubin.clone());
    }
    let path = cache_folder().map(|folder| folder.join(format!("{kernel}-{arch}-{key:016x}.cubin")));
    let cubin = match path.as_deref().and_then(read_cached) {
        Some(cubin) => cubin,
        None => {
            let cubin = nvrtc()?.compile(kernel, file, source, &options)?;
            if let Some(path) = &path {
                write_cached(path, &cubin);
            }
            cubin
        }
    };
    let cubin = std::sync::Arc::new(cubin);
    COMPILED.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(HashMap::new).insert(key, cubin.clone());
    Ok(cubin)
}
