// rs2gpu_runtime.rs: part of rs2gpu, copied unchanged beside every generated kernel module (whose first line
// names the rs2gpu version). Do not edit the copy: change this file in rs2gpu.
//
// What every generated kernel function uses: the `Gpu` context, `DeviceBuffer`s, the launch arguments laid
// out exactly as the kernels' manifest says, the launch geometry, and the host-side arithmetic of loop
// bounds with Rust's semantics. Transfers are plain (pageable) copies on the default stream, which also
// orders them after earlier launches.

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod driver {
    include!(concat!(env!("OUT_DIR"), "/rs2gpu_driver.rs"));
}

use driver::{CuDevicePtr, CuFunction, CuModule, CuStream, Cuda, DeviceContext};

// `BLOCK_SIZE: u32`, the threads per block of every launch, is defined by the generated module beside its
// `include!` of this file: the manifest's block size, for which the kernels' block reductions are written.
const MAX_GRID_X: u64 = (1 << 31) - 1;
const MAX_GRID_YZ: u64 = 65535;
/// Blocks per multiprocessor of a launch with reductions: 8 blocks of 256 threads fill an SM's 2048
/// threads, so the grid is one full wave and the blocks' partial results stay few.
const REDUCTION_BLOCKS_PER_MULTIPROCESSOR: u64 = 8;
/// The kernel module's readback area, whose panic record (the first 88 bytes) the host reads after a call
/// of a kernel that checks something on the device.
const READBACK_SYMBOL: &str = "rs2gpu_readback";
const PANIC_RECORD_BYTES: usize = 88;
/// How long `finish` polls a call's done word before it waits for the device instead (a long kernel need
/// not keep a host core busy), asking the driver every `DONE_POLLS_PER_QUERY` polls whether a launch failed.
const DONE_POLL: Duration = Duration::from_millis(2);
const DONE_POLLS_PER_QUERY: u32 = 256;

// ------------------------------------------------------------------ errors

/// Why a kernel call did not run. GPU failures are returned, never panicked on or dropped.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Error {
    /// No usable GPU: the CUDA driver or NVRTC is not installed, or there is no such device.
    Unavailable(String),
    /// A CUDA driver or NVRTC call failed (`context` says what was being done, when known).
    Driver {
        /// The API function that failed, e.g. "cuMemAlloc".
        call: &'static str,
        /// Its status code.
        code: i32,
        /// The driver's name and text for the code.
        message: String,
        /// What the kernel call was doing.
        context: String,
    },
    /// NVRTC rejected a kernel's generated C++; `log` is NVRTC's output.
    Compile {
        /// The kernel.
        kernel: &'static str,
        /// The compiler, the file and the options.
        message: String,
        /// NVRTC's log.
        log: String,
    },
    /// An argument does not fit the kernel (a length, or a buffer of another GPU); nothing was launched.
    Argument {
        /// The kernel.
        kernel: &'static str,
        /// The parameter.
        param: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// The kernel panicked as the Rust code would: an index out of bounds or a division by zero, found
    /// on the host before any device work, or on the device (then nothing was copied back).
    Panic {
        /// The kernel.
        kernel: &'static str,
        /// Rust's panic message.
        message: String,
        /// Where, as file:line:column ("" when the host cannot tell).
        source: &'static str,
    },
    /// With these arguments two iterations of a parallel loop would write one element (a condition the
    /// translator could only check at launch); nothing was launched.
    Race {
        /// The kernel.
        kernel: &'static str,
        /// The write, as file:line:column.
        source: &'static str,
    },
    /// The launch arguments disagree with the compiled kernel: a bug in rs2gpu.
    Abi(String),
}

impl Error {
    /// True when the machine has no usable GPU (no driver, no NVRTC, no device), as opposed to a failure
    /// of the GPU or of the call.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Error::Unavailable(_))
    }

    fn during(self, what: impl Into<String>) -> Error {
        match self {
            Error::Driver { call, code, message, context } if context.is_empty() => {
                Error::Driver { call, code, message, context: what.into() }
            }
            other => other,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Unavailable(why) => write!(f, "no usable GPU: {why}"),
            Error::Driver { call, code, message, context } if context.is_empty() => {
                write!(f, "{call} failed with {message} (status {code})")
            }
            Error::Driver { call, code, message, context } => {
                write!(f, "{context}: {call} failed with {message} (status {code})")
            }
            Error::Compile { kernel, message, log } => {
                write!(f, "kernel `{kernel}` did not compile: {message}\n{log}")
            }
            Error::Argument { kernel, param, message } => {
                write!(f, "kernel `{kernel}`, argument `{param}`: {message}; nothing was launched")
            }
            Error::Panic { kernel, message, source: "" } => {
                write!(f, "kernel `{kernel}` panicked: {message}")
            }
            Error::Panic { kernel, message, source } => write!(f, "kernel `{kernel}` panicked at {source}:\n{message}"),
            Error::Race { kernel, source } => write!(
                f,
                "kernel `{kernel}`: with these arguments, two iterations of the loop would write the same \
                 element at {source} (the row stride is shorter than the row); nothing was launched"
            ),
            Error::Abi(message) => write!(f, "kernel arguments disagree with the compiled kernel: {message}"),
        }
    }
}

impl std::error::Error for Error {}

/// Why a launch cannot run with these arguments (found on the host, before any device work).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeError {
    /// The Rust expression panics with this message (a division by zero, say).
    Panic(&'static str),
    /// A condition of the race-freedom proof does not hold for the write at this place.
    Race(&'static str),
    /// The access at `source` would index a slice of length `len` at `index`.
    OutOfBounds {
        /// The slice's length.
        len: u64,
        /// The first index out of bounds, in iteration order.
        index: i128,
        /// The access, as file:line:column.
        source: &'static str,
    },
}

// ------------------------------------------------------------------ plain data

/// Plain data that can be copied to and from a GPU byte for byte, with the same layout on both sides.
///
/// # Safety
/// Implement it only for `Copy` types with a fixed layout: the primitive numbers, `bool`, arrays of them,
/// and `#[repr(C)]` structs of them (the generated module implements it for the structs its kernels use).
pub unsafe trait DeviceCopy: Copy + Send + Sync + 'static {}

macro_rules! device_copy {
    ($($t:ty),*) => { $(unsafe impl DeviceCopy for $t {})* };
}
device_copy!(bool, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, f32, f64);
// SAFETY: an array of plain data is plain data.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {}

// ------------------------------------------------------------------ the GPU context

/// One GPU, opened through the CUDA driver: it compiles each kernel once (with NVRTC, cached on disk),
/// owns the device memory of its `DeviceBuffer`s, and runs the launches in order.
///
/// Cloning is cheap and shares the context. Loading the driver happens here, at run time, so programs
/// build on machines without CUDA; `Gpu::new()` returns `Error::Unavailable` where there is no GPU.
#[derive(Clone)]
pub struct Gpu {
    inner: Arc<Context>,
    /// The stream its kernel calls queue their launches on (None: the default stream); see `Stream`.
    stream: Option<Arc<OwnedStream>>,
}

/// A stream of a context, destroyed when the last `Gpu` handle queueing on it goes.
struct OwnedStream {
    context: Arc<Context>,
    handle: usize,
}

impl Drop for OwnedStream {
    fn drop(&mut self) {
        if self.context.cuda.enter(&self.context.device).is_ok() {
            // SAFETY: the handle came from `create_stream`, and no handle that queues on it is left.
            unsafe { self.context.cuda.destroy_stream(self.handle as CuStream) };
        }
    }
}

struct Context {
    cuda: &'static Cuda,
    device: DeviceContext,
    kernels: Mutex<Vec<Arc<LoadedKernel>>>,
}

// SAFETY: the driver API is thread-safe; every call first makes this context current on the calling thread.
unsafe impl Send for Context {}
unsafe impl Sync for Context {}

impl Drop for Context {
    fn drop(&mut self) {
        if self.cuda.enter(&self.device).is_ok() {
            for kernel in self.kernels.get_mut().unwrap_or_else(|e| e.into_inner()).drain(..) {
                // SAFETY: the context is being dropped, so no launch can use the module, the partials or the
                // result words any more; all were made for this kernel only.
                unsafe {
                    self.cuda.unload_module(kernel.module);
                    if kernel.partials != 0 {
                        let _ = self.cuda.free(kernel.partials);
                    }
                    if !kernel.results.0.is_null() {
                        let _ = self.cuda.free_mapped(kernel.results.0);
                    }
                }
            }
        }
        self.cuda.close_device(&self.device);
    }
}

impl Gpu {
    /// The first CUDA device.
    pub fn new() -> Result<Gpu, Error> {
        Gpu::with_device(0)
    }

    /// CUDA device number `ordinal`.
    pub fn with_device(ordinal: usize) -> Result<Gpu, Error> {
        let cuda = driver::cuda()?;
        let device = cuda.open_device(ordinal)?;
        Ok(Gpu { inner: Arc::new(Context { cuda, device, kernels: Mutex::new(Vec::new()) }), stream: None })
    }

    /// A new stream of this GPU. Kernel calls given it (`&stream`, where a `&Gpu` is taken) queue their
    /// launches there; see `Stream`.
    pub fn stream(&self) -> Result<Stream, Error> {
        let handle = self.enter()?.create_stream()? as usize;
        let owned = OwnedStream { context: self.inner.clone(), handle };
        Ok(Stream { gpu: Gpu { inner: self.inner.clone(), stream: Some(Arc::new(owned)) } })
    }

    /// The stream this handle's kernel calls queue on (null: the default stream).
    fn queue(&self) -> CuStream {
        self.stream.as_ref().map_or(std::ptr::null_mut(), |s| s.handle as CuStream)
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn name(&self) -> &str {
        &self.inner.device.name
    }

    /// The architecture the kernels are compiled for, e.g. "sm_90a" on an H100 or H200.
    pub fn arch(&self) -> &str {
        &self.inner.device.arch
    }

    /// A one-line description: device, architecture, driver version and library.
    pub fn describe(&self) -> String {
        let version = self.inner.device.driver_version;
        format!("{} ({}), CUDA driver {}.{} from {}", self.name(), self.arch(), version / 1000,
                (version % 1000) / 10, self.inner.cuda.library_path())
    }

    /// Waits until every launch so far has finished; returns the error of one that failed on the device.
    ///
    /// Calls that return a value or copy data back wait by themselves; calls on `DeviceBuffer`s that
    /// return nothing do not, so their faults surface here or at the next call that waits.
    pub fn synchronize(&self) -> Result<(), Error> {
        self.enter()?;
        self.inner.cuda.synchronize()
    }

    fn enter(&self) -> Result<&'static Cuda, Error> {
        self.inner.cuda.enter(&self.inner.device)?;
        Ok(self.inner.cuda)
    }

    fn same(&self, other: &Gpu) -> bool {
        self.inner.device.context == other.inner.device.context
    }

    /// The kernel compiled and loaded on this GPU (once per process and device).
    pub(super) fn kernel(&self, source: &'static KernelSource) -> Result<Arc<LoadedKernel>, Error> {
        let cuda = self.enter()?;
        let mut kernels = self.inner.kernels.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(kernel) = kernels.iter().find(|k| std::ptr::eq(k.source, source)) {
            return Ok(kernel.clone());
        }
        let cubin = driver::compile_cuda(source.name, source.file, source.cuda, self.arch(), source.fast_math)?;
        let module = cuda.load_module(&cubin).map_err(|e| e.during(format!("loading kernel `{}`", source.name)))?;
        let max_blocks = u64::from(self.inner.device.multiprocessors) * REDUCTION_BLOCKS_PER_MULTIPROCESSOR;
        let loaded = LoadedKernel::new(cuda, source, module, max_blocks);
        if loaded.is_err() {
            // SAFETY: the module was just loaded and nothing uses it.
            unsafe { cuda.unload_module(module) };
        }
        let loaded = Arc::new(loaded?);
        kernels.push(loaded.clone());
        Ok(loaded)
    }
}

/// A stream of one GPU, from `Gpu::stream`: a `Gpu` (it dereferences to one) whose kernel calls queue their
/// launches on this stream instead of the default one, so that calls on different streams may run at the
/// same time. A call waits for its stream where it returns a value or can record a panic, and otherwise
/// returns with its launches queued. `DeviceBuffer` copies (`from_slice`, `upload`, `download`, ...) run
/// on the default stream, which waits for the work queued on the stream before them, as the stream's later
/// work waits for them: a result downloaded after a call is the call's.
pub struct Stream {
    gpu: Gpu,
}

impl Stream {
    /// Waits for the work queued on this stream; returns the error of a launch of it that failed.
    pub fn synchronize(&self) -> Result<(), Error> {
        self.gpu.enter()?.synchronize_stream(self.gpu.queue())
    }
}

impl std::ops::Deref for Stream {
    type Target = Gpu;

    fn deref(&self) -> &Gpu {
        &self.gpu
    }
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream").field("gpu", &self.gpu).finish()
    }
}

impl fmt::Debug for Gpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gpu").field("name", &self.name()).field("arch", &self.arch()).finish()
    }
}

// ------------------------------------------------------------------ device memory

/// `len` values of `T` in the memory of one GPU. Kernel calls on `DeviceBuffer`s move no data between
/// the host and the GPU, so data can stay there across many calls; `upload` and `download` copy.
pub struct DeviceBuffer<T: DeviceCopy> {
    gpu: Gpu,
    ptr: CuDevicePtr,
    len: usize,
    _elements: PhantomData<T>,
}

impl<T: DeviceCopy> DeviceBuffer<T> {
    /// `len` zero bytes' worth of `T` (zero for every number, `false` for `bool`).
    pub fn zeroed(gpu: &Gpu, len: usize) -> Result<Self, Error> {
        let cuda = gpu.enter()?;
        let bytes = len.checked_mul(size_of::<T>())
            .ok_or_else(|| Error::Abi(format!("{len} elements do not fit in memory")))?;
        let ptr = if bytes == 0 { 0 } else { cuda.alloc(bytes)? };
        let buffer = DeviceBuffer { gpu: gpu.clone(), ptr, len, _elements: PhantomData };
        if bytes != 0 {
            // SAFETY: the allocation above holds `bytes` bytes.
            unsafe { cuda.zero(ptr, bytes)? };
        }
        Ok(buffer)
    }

    /// A copy of `data` on the GPU.
    pub fn from_slice(gpu: &Gpu, data: &[T]) -> Result<Self, Error> {
        let cuda = gpu.enter()?;
        let bytes = size_of_val(data);
        let ptr = if bytes == 0 { 0 } else { cuda.alloc(bytes)? };
        let buffer = DeviceBuffer { gpu: gpu.clone(), ptr, len: data.len(), _elements: PhantomData };
        if bytes != 0 {
            // SAFETY: `data` is readable for `bytes` bytes and the allocation holds as many.
            unsafe { cuda.upload(ptr, data.as_ptr().cast::<c_void>(), bytes)? };
        }
        Ok(buffer)
    }

    /// Replaces the contents with `data`, which must have the same length.
    pub fn upload(&mut self, data: &[T]) -> Result<(), Error> {
        self.check_len(data.len(), "upload")?;
        let cuda = self.gpu.enter()?;
        if self.len != 0 {
            // SAFETY: same length, so `data` and the allocation both hold `size_of_val(data)` bytes.
            unsafe { cuda.upload(self.ptr, data.as_ptr().cast::<c_void>(), size_of_val(data))? };
        }
        Ok(())
    }

    /// Copies the contents into `data`, which must have the same length, after the launches before it.
    pub fn download(&self, data: &mut [T]) -> Result<(), Error> {
        self.check_len(data.len(), "download")?;
        let cuda = self.gpu.enter()?;
        if self.len != 0 {
            // SAFETY: same length; every byte the GPU holds is a valid `T` (see `DeviceCopy`).
            unsafe { cuda.download(data.as_mut_ptr().cast::<c_void>(), self.ptr, size_of_val(data))? };
        }
        Ok(())
    }

    /// The contents, copied into a new vector after the launches before it.
    pub fn to_vec(&self) -> Result<Vec<T>, Error> {
        let mut out: Vec<T> = Vec::with_capacity(self.len);
        let cuda = self.gpu.enter()?;
        if self.len != 0 {
            // SAFETY: the vector has room for `len` values; the download fills every byte of them.
            unsafe {
                cuda.download(out.as_mut_ptr().cast::<c_void>(), self.ptr, self.len * size_of::<T>())?;
                out.set_len(self.len);
            }
        }
        Ok(out)
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The GPU whose memory this is.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    fn check_len(&self, len: usize, what: &str) -> Result<(), Error> {
        if len == self.len {
            return Ok(());
        }
        Err(Error::Abi(format!("cannot {what} {len} elements: the buffer holds {}", self.len)))
    }
}

impl<T: DeviceCopy> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if self.ptr != 0 {
            if let Ok(cuda) = self.gpu.enter() {
                // SAFETY: allocated by `zeroed` or `from_slice` and freed only here. The driver waits for
                // launches still using it. An error cannot be reported from `drop`; a fault it would
                // report is also returned by the next call that waits.
                let _ = unsafe { cuda.free(self.ptr) };
            }
        }
    }
}

impl<T: DeviceCopy> fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceBuffer<{}>[{}] on {}", std::any::type_name::<T>(), self.len, self.gpu.name())
    }
}

// ------------------------------------------------------------------ kernels and launches

/// What the generated module knows about one kernel: its C++ and, for each parallel loop, the symbol
/// and the byte size of each launch argument (from the manifest).
pub(super) struct KernelSource {
    pub(super) name: &'static str,
    pub(super) file: &'static str,
    pub(super) cuda: &'static str,
    pub(super) fast_math: bool,
    pub(super) launches: &'static [LaunchSource],
    /// The checks the device makes (index bounds, divisions), by the site number it records.
    pub(super) panics: &'static [PanicSite],
    /// The reductions' result words, over all launches.
    pub(super) result_words: usize,
}

pub(super) struct PanicSite {
    pub(super) site: u32,
    pub(super) kind: &'static str,
    pub(super) source: &'static str,
}

pub(super) struct LaunchSource {
    pub(super) source: &'static str,
    pub(super) arguments: &'static [usize],
    /// How many reductions the launch makes (each takes a seed, the blocks' partials and a result word).
    pub(super) reductions: usize,
    /// The entry points this module may launch, in the order it tries them (rs2gpu's `EntryKind` order): it
    /// launches the first whose condition holds (see `EntryKind`). All take the same arguments.
    pub(super) entries: &'static [Entry],
    /// Whether the launch ends its call and reduces: it takes the address of the call's done word last,
    /// and its last block sets that word after writing the results, so `finish` polls the word instead of
    /// waiting until the driver has seen the whole kernel end.
    pub(super) signals_done: bool,
}

/// The kinds of entry point, in the order the host tries them; each runs where its condition holds:
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum EntryKind {
    /// The loop's `y[i] += v` on f64 as atomic adds the L2 performs: where every access the loop makes
    /// only under a condition is in bounds and the slice elements it touches fit in the L2.
    L2Adds,
    /// `width` consecutive iterations per thread with 16-byte accesses: where those accesses are in bounds
    /// and aligned (a nest's groups test their own rows; it also needs a grid that covers its groups).
    Vector,
    /// One block per iteration, its inner loops split over its threads: where those accesses are in bounds
    /// and a warp per iteration would leave the device partly idle (`fill`), on any grid.
    Blocks,
    /// One warp per iteration, its inner loops split over the warp's lanes: where those accesses are in
    /// bounds, on any grid.
    Warps,
    /// A few iterations per block, their inner loops split over its groups of threads: where those accesses
    /// are in bounds and the loop has fewer iterations than the device holds threads (`fill`), on any grid.
    Columns,
    /// A matrix product on larger tiles: where those accesses are in bounds, a grid covers the loop nest and
    /// it has at least the grid's `fill` iterations per thread the device holds.
    Tiles,
    /// One thread per iteration: where those accesses are in bounds and a grid covers the loop nest.
    Covering,
    /// Each thread strides over the iterations: where those accesses are in bounds, or always when the
    /// launch has no `Checked` entry point.
    General,
    /// The same loop checking the accesses it makes under a condition on the device: always.
    Checked,
}

pub(super) struct Entry {
    pub(super) kind: EntryKind,
    pub(super) symbol: &'static str,
    /// Whether it can record a panic (a check it keeps).
    pub(super) records_panics: bool,
    /// One thread per iteration, or per group of a row's iterations, on a grid that covers them.
    pub(super) grid: Option<Grid>,
    /// A `Vector` entry point's lanes.
    pub(super) lanes: Option<Lanes>,
    /// An `L2Adds` entry point's bytes of slice elements one iteration touches.
    pub(super) bytes_per_iteration: u64,
    /// A `Blocks`, `Warps` or `Columns` entry point's threads per iteration (0 for the others), which it
    /// runs only where the count times `fill` is below the threads the device holds (`fill` 0: always).
    pub(super) threads_per_iteration: u64,
    pub(super) fill: u64,
}

pub(super) struct Grid {
    /// The block its body needs (a tiled product), or zeros: any block.
    pub(super) block: [u32; 3],
    /// Every count must stay below it (the entry point's thread coordinates are 32-bit).
    pub(super) count_limit: u64,
    /// The idle threads its grid starts with along x, so that its warps run iterations from multiples of 32.
    pub(super) lead: u64,
    /// The iterations each thread runs along x, y and z (a matrix product's micro-tile; ones: one).
    pub(super) tile: [u64; 3],
    /// A `Tiles` entry point's least iterations per thread the device holds (0 for the others).
    pub(super) fill: u64,
}

pub(super) struct Lanes {
    /// The iterations a thread runs at once, of 16 / width bytes each.
    pub(super) width: u64,
    /// The arguments that are the pointers of the slices it accesses, whose lanes must be 16-byte aligned
    /// (none in a nest).
    pub(super) pointers: &'static [usize],
    /// Per pointer, the offset of its slice's first lane from the loop variable.
    pub(super) offsets: &'static [i64],
    /// The argument that is the loop's first index.
    pub(super) start: usize,
}

impl LaunchSource {
    /// The entry point that runs where no other's condition holds: it checks every access the host cannot
    /// rule out of bounds.
    fn last_resort(&self) -> &Entry {
        self.entries.last().expect("every launch has a general entry point")
    }
}

impl KernelSource {
    /// The error of this kernel for a failed host-side evaluation.
    pub(super) fn refused(&'static self, error: RangeError) -> Error {
        match error {
            RangeError::Panic(message) => Error::Panic { kernel: self.name, message: message.to_string(), source: "" },
            RangeError::Race(source) => Error::Race { kernel: self.name, source },
            RangeError::OutOfBounds { len, index, source } => Error::Panic {
                kernel: self.name,
                message: format!("index out of bounds: the len is {len} but the index is {index}"),
                source,
            },
        }
    }
}

pub(super) struct LoadedKernel {
    source: &'static KernelSource,
    module: CuModule,
    /// Per launch, the function of each of its entry points.
    functions: Vec<Vec<CuFunction>>,
    /// The module's readback area (`rs2gpu_readback`), which holds the panic record.
    readback: CuDevicePtr,
    /// The reductions' result words (host and device address; null and 0 when the kernel has none): host
    /// memory the launches' last blocks write directly, so a call waits for its launches and copies nothing.
    /// The word after them is the done word, where a launch sets one (`LaunchSource::signals_done`).
    results: (*mut u64, CuDevicePtr),
    /// The blocks' partial results of the reductions of any one launch (0 when the kernel has none).
    partials: CuDevicePtr,
    /// The most blocks a launch with reductions gets.
    max_blocks: u64,
    /// One call at a time uses the readback area, the partials and the result words, and the buffers its
    /// launches' arguments are gathered in (kept from call to call, so a call allocates nothing).
    calls: Mutex<Gathered>,
}

/// A launch's arguments as they are gathered (see `KernelArgs`), in buffers kept between calls.
#[derive(Default)]
struct Gathered {
    words: Vec<u64>,
    places: Vec<(usize, usize)>,
    counts: Vec<u64>,
    reductions: Vec<(usize, u64)>,
    pointers: Vec<*mut c_void>,
}

impl Gathered {
    /// Adds an argument at its exact width, from the first byte of words of its own.
    fn push<T: DeviceCopy>(&mut self, value: &T) {
        let size = size_of::<T>();
        let first = self.words.len();
        self.words.resize(first + size.div_ceil(8).max(1), 0);
        // SAFETY: the words just added hold at least `size` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping((value as *const T).cast::<u8>(),
                                          self.words[first..].as_mut_ptr().cast::<u8>(), size)
        };
        self.places.push((first, size));
    }

    /// The pointer array the driver reads: one pointer per argument, at its first word.
    fn parameters(&mut self) -> &mut [*mut c_void] {
        let base = self.words.as_mut_ptr();
        self.pointers.clear();
        // SAFETY: each place is inside `words`, which the returned borrow keeps unchanged until the launch.
        self.pointers.extend(self.places.iter().map(|&(first, _)| unsafe { base.add(first) }.cast::<c_void>()));
        &mut self.pointers
    }

    /// Whether the vector entry point's accesses are aligned: every slice's first group of lanes, at the
    /// loop's first index plus the slice's offset, at a 16-byte aligned address. (The low bytes of an
    /// argument's first word are its value, and the low 4 bits of an address or an index are those of its
    /// word; the arithmetic wraps, as it may modulo 16.)
    fn vector_fits(&self, lanes: &Lanes) -> bool {
        let word = |argument: usize| self.words[self.places[argument].0];
        let size = 16 / lanes.width;
        lanes.pointers.iter().zip(lanes.offsets).all(|(&pointer, &offset)| {
            let first = word(lanes.start).wrapping_add(offset as u64);
            word(pointer).wrapping_add(first.wrapping_mul(size)) % 16 == 0
        })
    }
}

// SAFETY: module and function handles may be used from any thread once the context is current.
unsafe impl Send for LoadedKernel {}
unsafe impl Sync for LoadedKernel {}

impl LoadedKernel {
    fn new(cuda: &Cuda, source: &'static KernelSource, module: CuModule, max_blocks: u64)
        -> Result<LoadedKernel, Error> {
        let loading = || format!("loading kernel `{}`", source.name);
        let load = |symbol: &str, arguments: &[usize]| -> Result<CuFunction, Error> {
            let function = cuda.function(module, symbol).map_err(|e| e.during(loading()))?;
            if let Some(sizes) = cuda.parameter_sizes(function) {
                if sizes != arguments {
                    return Err(Error::Abi(format!(
                        "{symbol} takes parameters of {sizes:?} bytes, the manifest says {arguments:?}")));
                }
            }
            Ok(function)
        };
        let functions = source.launches.iter()
            .map(|launch| launch.entries.iter().map(|entry| load(entry.symbol, launch.arguments)).collect())
            .collect::<Result<Vec<Vec<CuFunction>>, Error>>()?;
        let readback = cuda.global(module, READBACK_SYMBOL).map_err(|e| e.during(loading()))?;
        let most = source.launches.iter().map(|launch| launch.reductions).max().unwrap_or(0);
        // a partial is one 8-byte word per block and reduction
        let bytes = most * max_blocks as usize * 8;
        let partials = if bytes == 0 { 0 } else { cuda.alloc(bytes).map_err(|e| e.during(loading()))? };
        let results = if source.result_words == 0 {
            (std::ptr::null_mut(), 0)
        } else {
            let done_word = source.launches.iter().any(|launch| launch.signals_done);
            cuda.alloc_mapped(8 * (source.result_words + done_word as usize)).map_err(|e| e.during(loading()))?
        };
        Ok(LoadedKernel { source, module, functions, readback, results, partials, max_blocks,
                          calls: Mutex::new(Gathered::default()) })
    }

    /// The done word (see `results`): the low 4 bytes of the word after the result words.
    fn done_word(&self) -> (*mut u32, CuDevicePtr) {
        let word = self.source.result_words;
        // SAFETY: a kernel with a launch that sets the done word has a word for it after its result words.
        (unsafe { self.results.0.add(word) }.cast::<u32>(), self.results.1 + 8 * word as u64)
    }

    /// Waits until the call's last launch has set the done word, or for the device where it does not come:
    /// then the results are in host memory. A launch that fails never sets it, which the driver's answer
    /// to `finished` reports.
    fn wait_for_done(&self, cuda: &Cuda, stream: CuStream) -> Result<(), Error> {
        let word = self.done_word().0;
        let started = Instant::now();
        let mut polls_to_query = DONE_POLLS_PER_QUERY;
        // SAFETY: the word is mapped host memory this kernel owns; the device writes it, so it is read
        // through a volatile load.
        while unsafe { std::ptr::read_volatile(word) } == 0 {
            polls_to_query -= 1;
            if polls_to_query == 0 {
                if cuda.finished(stream)? || started.elapsed() > DONE_POLL {
                    return cuda.synchronize_stream(stream);
                }
                polls_to_query = DONE_POLLS_PER_QUERY;
            }
            std::hint::spin_loop();
        }
        // the results, written before the word, are read after it
        std::sync::atomic::fence(std::sync::atomic::Ordering::Acquire);
        Ok(())
    }

    /// One call of the kernel on `gpu` (the GPU that loaded it): its launches, then `finish`.
    pub(super) fn call<'a>(&'a self, gpu: &'a Gpu) -> KernelCall<'a> {
        let guard = self.calls.lock().unwrap_or_else(|e| e.into_inner());
        KernelCall { gpu, kernel: self, gathered: guard, next_word: 0, seeds: Vec::new(), may_have_panicked: false,
                     signalled: false }
    }
}

/// The launches of one call, and what it reads back after them.
pub(super) struct KernelCall<'a> {
    gpu: &'a Gpu,
    kernel: &'a LoadedKernel,
    gathered: std::sync::MutexGuard<'a, Gathered>,
    /// The result word of the next reduction.
    next_word: usize,
    /// (result word, seed) of the reductions of launches that ran no iteration: their results are the seeds.
    seeds: Vec<(usize, u64)>,
    /// Whether code that can record a panic was launched.
    may_have_panicked: bool,
    /// Whether a launch that sets the done word was launched (the call's last).
    signalled: bool,
}

impl<'a> KernelCall<'a> {
    /// The arguments of launch `index`, to be filled in the manifest's order.
    pub(super) fn args(&mut self, index: usize) -> KernelArgs<'_, 'a> {
        let mut gathered = std::mem::take(&mut *self.gathered);
        gathered.words.clear();
        gathered.places.clear();
        gathered.counts.clear();
        gathered.reductions.clear();
        KernelArgs { call: self, index, gathered, conditional_in_bounds: false }
    }

    /// Waits for the launches (when one of them can have recorded a panic or the kernel reduces), reading
    /// back the panic record if one can; returns the device's panic, if any (then resets the record for
    /// the next call), or else the reductions' results, which the launches wrote into host memory.
    pub(super) fn finish(self) -> Result<Results, Error> {
        let source = self.kernel.source;
        let cuda = self.gpu.enter()?;
        let during = || format!("running kernel `{}`", source.name);
        if self.may_have_panicked {
            let mut record = [0u64; PANIC_RECORD_BYTES / 8];
            // SAFETY: the readback area starts with the record; `record` holds PANIC_RECORD_BYTES bytes. The
            // copy waits for the launches (the default stream orders them).
            unsafe { cuda.download(record.as_mut_ptr().cast::<c_void>(), self.kernel.readback, PANIC_RECORD_BYTES) }
                .map_err(|e| e.during(during()))?;
            if let Some((site, index, len)) = decode_panic(&record)? {
                // SAFETY: the record is the first PANIC_RECORD_BYTES bytes of the readback area.
                unsafe { cuda.zero(self.kernel.readback, PANIC_RECORD_BYTES)? };
                return Err(source.device_panic(site, index, len));
            }
        } else if self.signalled {
            self.kernel.wait_for_done(cuda, self.gpu.queue()).map_err(|e| e.during(during()))?;
        } else if source.result_words != 0 {
            cuda.synchronize_stream(self.gpu.queue()).map_err(|e| e.during(during()))?;
        }
        // SAFETY: `results` holds `result_words` words, which no launch writes any more: the call has waited
        // for its launches, and the next call cannot start before this one ends.
        let words = (0..source.result_words).map(|k| unsafe { std::ptr::read_volatile(self.kernel.results.0.add(k)) })
            .collect();
        let mut results = Results { words };
        for (word, seed) in self.seeds {
            results.words[word] = seed;
        }
        Ok(results)
    }
}

/// (site, index, len) of the device's panic record, if it holds one (word 0 is not 0). Each of words 1 to 9
/// holds in its low 16 bits a piece of them, lowest first: the site in 1 piece, the index in 4, the len in
/// 4; its high bits are the key of the failure it is from (the first in Rust's order), the same in every word.
fn decode_panic(record: &[u64]) -> Result<Option<(u32, u64, u64)>, Error> {
    let words = &record[..10]; // the last word is the number of the launch that recorded
    if words[0] == 0 {
        return Ok(None);
    }
    if words.iter().any(|w| w >> 16 != words[0] >> 16) {
        return Err(Error::Abi(format!("the device's panic record mixes failures: {words:x?}")));
    }
    let number = |pieces: &[u64]| pieces.iter().rev().fold(0u64, |value, piece| value << 16 | (piece & 0xffff));
    Ok(Some(((words[1] & 0xffff) as u32, number(&words[2..6]), number(&words[6..10]))))
}

/// The reductions' results of one call, by result word.
pub(super) struct Results {
    words: Vec<u64>,
}

impl Results {
    /// The value in result word `word`.
    pub(super) fn value<T: DeviceCopy>(&self, word: usize) -> T {
        assert!(size_of::<T>() <= 8, "reductions are of scalars");
        // SAFETY: the low bytes of the word hold a `T`, written by the kernel's last block or by `finish`.
        unsafe { std::ptr::read_unaligned((&self.words[word] as *const u64).cast::<T>()) }
    }
}

impl KernelSource {
    /// The error for the panic the device recorded at check `site`, with Rust's message.
    fn device_panic(&'static self, site: u32, index: u64, len: u64) -> Error {
        let found = self.panics.iter().find(|p| p.site == site);
        let (kind, source) = found.map_or(("", ""), |p| (p.kind, p.source));
        let message = match (kind, index) {
            ("bounds", _) => format!("index out of bounds: the len is {len} but the index is {index}"),
            ("div", 0) => "attempt to divide by zero".to_string(),
            ("div", _) => "attempt to divide with overflow".to_string(),
            ("rem", 0) => "attempt to calculate the remainder with a divisor of zero".to_string(),
            ("rem", _) => "attempt to calculate the remainder with overflow".to_string(),
            _ => format!("panic at check site {site}"),
        };
        Error::Panic { kernel: self.name, message, source }
    }
}

/// One launch's arguments, each kept at its exact size (the pointer array the driver reads points at
/// them), and the iteration count of each dimension of its loop nest: in `gathered`, `words` holds the
/// arguments, `places` the (first word, size in bytes) of each, `counts` the dimensions' counts, outermost
/// first, and `reductions` the (result word, seed) of each reduction. The buffers go back to the call
/// when the launch is done with them.
pub(super) struct KernelArgs<'c, 'a> {
    call: &'c mut KernelCall<'a>,
    index: usize,
    gathered: Gathered,
    conditional_in_bounds: bool,   // the host found every access made under a condition in bounds
}

impl Drop for KernelArgs<'_, '_> {
    fn drop(&mut self) {
        *self.call.gathered = std::mem::take(&mut self.gathered);
    }
}

impl KernelArgs<'_, '_> {
    /// A value passed at its exact width (a scalar, a `#[repr(C)]` struct, a loop start, a pointer).
    pub(super) fn value<T: DeviceCopy>(&mut self, value: &T) {
        self.gathered.push(value);
    }

    fn buffer<T: DeviceCopy>(&mut self, param: &'static str, buffer: &DeviceBuffer<T>) -> Result<(), Error> {
        if !buffer.gpu.same(self.call.gpu) {
            return Err(Error::Argument { kernel: self.call.kernel.source.name, param,
                                         message: "the buffer is in the memory of another GPU".to_string() });
        }
        self.value(&buffer.ptr);
        Ok(())
    }

    /// A `&[T]` or `&mut [T]` parameter: the device pointer and the length.
    pub(super) fn slice<T: DeviceCopy>(&mut self, param: &'static str, buffer: &DeviceBuffer<T>) -> Result<(), Error> {
        self.buffer(param, buffer)?;
        self.value(&(buffer.len as u64));
        Ok(())
    }

    /// A `&[T]` or `&mut [T]` parameter of a launch whose code does not read its length: the device pointer.
    pub(super) fn slice_pointer<T: DeviceCopy>(&mut self, param: &'static str, buffer: &DeviceBuffer<T>)
        -> Result<(), Error> {
        self.buffer(param, buffer)
    }

    /// A `&[T; N]` (or, with `len` 1, a `&S`) parameter: the device pointer, after checking the length.
    pub(super) fn fixed<T: DeviceCopy>(&mut self, param: &'static str, buffer: &DeviceBuffer<T>, len: usize)
        -> Result<(), Error> {
        if buffer.len != len {
            return Err(Error::Argument { kernel: self.call.kernel.source.name, param,
                                         message: format!("the buffer must hold exactly {len} elements, not {}",
                                                          buffer.len) });
        }
        self.buffer(param, buffer)
    }

    /// One dimension of the loop nest: its first index (at the index type's width) and its count.
    pub(super) fn dim<I: DeviceCopy>(&mut self, dim: &Dim<I>) {
        self.value(&dim.start);
        self.value(&dim.count);
        self.gathered.counts.push(dim.count);
    }

    /// Whether the host found every access the loop makes only under a condition in bounds: then the entry
    /// point without their device checks runs.
    pub(super) fn conditional_in_bounds(&mut self, in_bounds: bool) {
        self.conditional_in_bounds = in_bounds;
    }

    /// The launch's number in the call, for a launch that can record a panic or stop on one: the panic it
    /// records carries it, and a later launch stops on a panic recorded with another number.
    pub(super) fn number(&mut self) {
        self.value(&(self.index as u32 + 1));
    }

    /// The launch's next reduction: its seed (the value before the loop) by value, then the device memory
    /// of the blocks' partials and of its result word.
    pub(super) fn reduction<T: DeviceCopy>(&mut self, seed: &T) {
        assert!(size_of::<T>() <= 8, "reductions are of scalars");
        let kernel = self.call.kernel;
        let word = self.call.next_word;
        self.call.next_word += 1;
        let mut bits = 0u64;
        // SAFETY: `seed` is plain data of at most 8 bytes, copied into the low bytes of `bits`.
        unsafe { std::ptr::copy_nonoverlapping((seed as *const T).cast::<u8>(), (&mut bits as *mut u64).cast::<u8>(),
                                               size_of::<T>()) };
        self.value(seed);
        self.value(&(kernel.partials + 8 * kernel.max_blocks * self.gathered.reductions.len() as u64));
        self.value(&(kernel.results.1 + 8 * word as u64));
        self.gathered.reductions.push((word, bits));
    }

    /// Launches, unless a dimension is empty (then the loop runs no iteration, as in Rust, and each
    /// reduction's result is its seed).
    pub(super) fn launch(mut self) -> Result<(), Error> {
        let kernel = self.call.kernel;
        let source = &kernel.source;
        let launch = &source.launches[self.index];
        if launch.signals_done {
            self.value(&kernel.done_word().1);
        }
        let sizes = || self.gathered.places.iter().map(|&(_, size)| size);
        if !sizes().eq(launch.arguments.iter().copied()) || self.gathered.reductions.len() != launch.reductions {
            return Err(Error::Abi(format!("{} was given arguments of {:?} bytes, the manifest says {:?}",
                                          launch.last_resort().symbol, sizes().collect::<Vec<_>>(),
                                          launch.arguments)));
        }
        let counts = &self.gathered.counts;
        if counts.contains(&0) {
            self.call.seeds.extend_from_slice(&self.gathered.reductions);
            return Ok(());
        }
        let max_blocks = (launch.reductions > 0).then_some(kernel.max_blocks);
        let in_bounds = self.conditional_in_bounds || launch.last_resort().kind != EntryKind::Checked;
        let l2_bytes = self.call.gpu.inner.device.l2_bytes;
        // a full wave of reduction blocks is every thread the device holds
        let resident_threads = kernel.max_blocks * u64::from(BLOCK_SIZE);
        let chosen = choose_entry(launch.entries, counts, in_bounds, l2_bytes, resident_threads,
                                  |lanes| self.gathered.vector_fits(lanes), max_blocks);
        let Some((index, (grid, block))) = chosen else {
            return Err(Error::Abi(format!("no entry point of {} runs on the counts {counts:?}",
                                          launch.last_resort().symbol)));
        };
        let (function, records_panics) = (kernel.functions[self.index][index], launch.entries[index].records_panics);
        self.call.may_have_panicked |= records_panics;
        let parameters = self.gathered.parameters();
        let cuda = self.call.gpu.enter()?;
        if launch.signals_done {
            // SAFETY: the done word is this kernel's mapped host memory; the call that set it last has
            // waited for it, so no launch in flight writes it.
            unsafe { std::ptr::write_volatile(kernel.done_word().0, 0) };
        }
        // SAFETY: every pointer points at an argument of the size the kernel's parameter has (checked above
        // against the manifest, and at load time against the cubin where the driver can tell).
        unsafe { cuda.launch(function, grid, block, parameters, self.call.gpu.queue()) }
            .map_err(|e| e.during(format!("launching kernel `{}` (the loop at {})", source.name, launch.source)))?;
        self.call.signalled |= launch.signals_done;
        Ok(())
    }
}

/// The counts of a vector launch's threads (at most three dimensions, in `groups`): the innermost loop's
/// (last) in groups of `width` iterations.
fn in_groups<'g>(counts: &[u64], width: u64, groups: &'g mut [u64; 3]) -> &'g [u64] {
    let groups = &mut groups[..counts.len()];
    groups.copy_from_slice(counts);
    if let Some(innermost) = groups.last_mut() {
        *innermost = innermost.div_ceil(width);
    }
    groups
}

/// One dimension of a launch: the loop's first index and its number of iterations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim<I> {
    /// The first value of the loop variable.
    pub start: I,
    /// How many iterations the loop runs (0 for an empty range).
    pub count: u64,
}

/// Integer arithmetic of host expressions, with Rust's panics where Rust panics (even in release builds).
pub(super) trait HostInt: Copy + PartialEq {
    fn wide(self) -> i128;
    fn checked_quotient(self, other: Self) -> Option<Self>;
    fn checked_remainder(self, other: Self) -> Option<Self>;
    fn is_zero(self) -> bool;
}

macro_rules! host_int {
    ($($t:ty),*) => { $(impl HostInt for $t {
        fn wide(self) -> i128 { self as i128 }
        fn checked_quotient(self, other: Self) -> Option<Self> { self.checked_div(other) }
        fn checked_remainder(self, other: Self) -> Option<Self> { self.checked_rem(other) }
        fn is_zero(self) -> bool { self == 0 }
    })* };
}
host_int!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

/// An integer widened exactly, for the launch-time checks.
pub(super) fn wide<T: HostInt>(x: T) -> i128 {
    x.wide()
}

/// `a / b` as Rust computes it for integers.
pub(super) fn div<T: HostInt>(a: T, b: T) -> Result<T, RangeError> {
    if b.is_zero() {
        return Err(RangeError::Panic("attempt to divide by zero"));
    }
    a.checked_quotient(b).ok_or(RangeError::Panic("attempt to divide with overflow"))
}

/// `a % b` as Rust computes it for integers.
pub(super) fn rem<T: HostInt>(a: T, b: T) -> Result<T, RangeError> {
    if b.is_zero() {
        return Err(RangeError::Panic("attempt to calculate the remainder with a divisor of zero"));
    }
    a.checked_remainder(b).ok_or(RangeError::Panic("attempt to calculate the remainder with overflow"))
}

/// The dimension of `start..end` (or `start..=end`): Rust's range, whose count is 0 when it is empty.
pub(super) fn range<I: HostInt>(start: I, end: I, inclusive: bool) -> Result<Dim<I>, RangeError> {
    let count = (end.wide() - start.wide() + i128::from(inclusive)).max(0);
    let count = u64::try_from(count).map_err(|_| RangeError::Panic("the loop runs 2^64 iterations or more, more than one launch can"))?;
    Ok(Dim { start, count })
}

/// `sum of coefficient * product(factors)`, exactly: the manifest's launch-time polynomials.
pub(super) fn poly(terms: &[(i128, &[i128])]) -> Result<i128, RangeError> {
    let mut total: Option<i128> = Some(0);
    for (coefficient, factors) in terms {
        let term = factors.iter().try_fold(*coefficient, |product, factor| product.checked_mul(*factor));
        total = total.zip(term).and_then(|(total, term)| total.checked_add(term));
    }
    total.ok_or(RangeError::Panic("a launch-time check does not fit in 128 bits"))
}

/// Confirms `value >= 0` for the write at `source`: the inequality the race-freedom proof left to the
/// launch (e.g. a row stride at least as long as the row).
pub(super) fn require_disjoint(value: i128, source: &'static str) -> Result<(), RangeError> {
    if value >= 0 { Ok(()) } else { Err(RangeError::Race(source)) }
}

/// A sequential loop around an access the host checks: its number of iterations, the coefficient of its
/// variable in the index, that variable's first value, and where its body starts in the evaluation order.
pub(super) struct AccessLoop {
    pub(super) extent: i128,
    pub(super) coefficient: i128,
    pub(super) start: i128,
    pub(super) at: u64,
}

/// An access every iteration of a launch makes, into a slice of `len` elements, at the index
/// `rest + sum axes[d] * (dimension d's variable) + sum loops[k].coefficient * (loop k's variable)`, the
/// dimensions and the loops outermost first; `at` is its place in the evaluation order.
pub(super) struct HostAccess<'a> {
    pub(super) len: usize,
    pub(super) rest: i128,
    pub(super) axes: &'a [i128],
    pub(super) loops: &'a [AccessLoop],
    pub(super) at: u64,
    pub(super) source: &'static str,
}

/// The host's bounds checks of a launch whose loop dimensions have these (first value, count): the panic
/// of the first access out of bounds in Rust's sequential run (the earliest iteration of the nest that has
/// one, then the first such access in that iteration), as rs2gpu's Python runtime (runtime/bounds.py)
/// finds it.
pub(super) fn first_out_of_bounds(accesses: &[HostAccess<'_>], dims: &[(i128, i128)]) -> Result<(), RangeError> {
    if accesses.iter().all(|access| in_bounds(access, dims)) {
        return Ok(()); // every call that launches, found without allocating
    }
    let mut first: Option<(Vec<i128>, u64, &HostAccess<'_>)> = None;
    for access in accesses {
        let extents: Vec<i128> = dims.iter().map(|d| d.1).chain(access.loops.iter().map(|l| l.extent)).collect();
        if extents.iter().any(|&n| n <= 0) {
            continue; // a loop around it runs no iteration: the access never happens
        }
        let coefficients: Vec<i128> =
            access.axes.iter().copied().chain(access.loops.iter().map(|l| l.coefficient)).collect();
        let starts: Vec<i128> = dims.iter().map(|d| d.0).chain(access.loops.iter().map(|l| l.start)).collect();
        let Some(offsets) = first_failure(access, &coefficients, &starts, &extents) else { continue };
        let mut order: Vec<i128> = offsets[..dims.len()].iter().map(|&x| x as i128).collect();
        for (lp, &x) in access.loops.iter().zip(&offsets[dims.len()..]) {
            order.extend([i128::from(lp.at), x as i128]);
        }
        order.push(i128::from(access.at));
        if first.as_ref().is_none_or(|(seen, _, _)| order < *seen) {
            let index = index_at(access.rest, &coefficients, &starts, &offsets);
            first = Some((order, index, access));
        }
    }
    match first {
        Some((_, index, access)) => Err(RangeError::OutOfBounds { len: access.len as u64, index: i128::from(index),
                                                                  source: access.source }),
        None => Ok(()),
    }
}

/// Whether every index of the access lies in its slice, or the access never happens (a loop around it runs
/// no iteration); false where that takes more than 128 bits to tell (`first_failure` then decides).
fn in_bounds(access: &HostAccess<'_>, dims: &[(i128, i128)]) -> bool {
    let terms = access.axes.iter().zip(dims).map(|(&c, &(s, n))| (c, s, n))
        .chain(access.loops.iter().map(|l| (l.coefficient, l.start, l.extent)));
    if terms.clone().any(|(_, _, n)| n <= 0) {
        return true;
    }
    matches!(reach(access.rest, terms), Some((_, low, high)) if low >= 0 && high < access.len as i128)
}

/// (base, lowest, highest) of `rest + sum c * (s + x)` over the box `0 <= x < n` of each (c, s, n), exactly,
/// or None where a step leaves 128 bits.
fn reach(rest: i128, terms: impl Iterator<Item = (i128, i128, i128)>) -> Option<(i128, i128, i128)> {
    let mut base = rest;
    let (mut low, mut high) = (0i128, 0i128);
    for (c, s, n) in terms {
        base = base.checked_add(c.checked_mul(s)?)?;
        let span = c.checked_mul(n - 1)?;
        low = low.checked_add(span.min(0))?;
        high = high.checked_add(span.max(0))?;
    }
    Some((base, base.checked_add(low)?, base.checked_add(high)?))
}

/// The index Rust computes (usize arithmetic, which wraps) at these loop offsets.
fn index_at(rest: i128, coefficients: &[i128], starts: &[i128], offsets: &[u64]) -> u64 {
    let mut index = rest as u64;
    for ((&c, &s), &x) in coefficients.iter().zip(starts).zip(offsets) {
        index = index.wrapping_add((c as u64).wrapping_mul((s as u64).wrapping_add(x)));
    }
    index
}

/// The first loop offsets (in Rust's order) at which the access is out of bounds, if any.
fn first_failure(access: &HostAccess<'_>, coefficients: &[i128], starts: &[i128], extents: &[i128]) -> Option<Vec<u64>> {
    let len = access.len as i128;
    let terms = coefficients.iter().zip(starts).zip(extents).map(|((&c, &s), &n)| (c, s, n));
    let wraps = |low: i128, high: i128| low < len - (1i128 << 64) || high >= 1i128 << 64;
    match reach(access.rest, terms) {
        Some((_, low, high)) if low >= 0 && high < len => None,
        Some((base, low, high)) if !wraps(low, high) => {
            // no index wraps back inside: out of bounds is below 0 (past the end once wrapped) or past the end
            let negated: Vec<i128> = coefficients.iter().map(|&c| -c).collect();
            let below = first_at_most(base, coefficients, extents, -1);
            let above = first_at_most(-base, &negated, extents, -len);
            match (below, above) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        }
        _ => scan(access, coefficients, starts, extents),
    }
}

/// The lexicographically first offsets in the box with `base + sum c_j * x_j <= bound`, if any (each
/// dimension takes the least value with which the later ones, at their most favourable, still reach it).
fn first_at_most(base: i128, coefficients: &[i128], extents: &[i128], bound: i128) -> Option<Vec<u64>> {
    let mut reach = vec![0i128; extents.len() + 1];
    for j in (0..extents.len()).rev() {
        reach[j] = reach[j + 1] + (coefficients[j] * (extents[j] - 1)).min(0);
    }
    if base + reach[0] > bound {
        return None;
    }
    let mut base = base;
    let mut offsets = Vec::with_capacity(extents.len());
    for (j, &c) in coefficients.iter().enumerate() {
        let room = bound - base - reach[j + 1];
        let x = if c >= 0 { 0 } else { (-room.div_euclid(-c)).max(0) };
        offsets.push(x as u64);
        base += c * x;
    }
    Some(offsets)
}

/// The first offsets at which the wrapped index is out of bounds, computing the indices in Rust's order:
/// for the accesses whose indices cross a multiple of 2^64, where a wrapped one may land in the slice.
fn scan(access: &HostAccess<'_>, coefficients: &[i128], starts: &[i128], extents: &[i128]) -> Option<Vec<u64>> {
    let steps: Vec<u64> = coefficients.iter().map(|&c| c as u64).collect();
    let counts: Vec<u64> = extents.iter().map(|&n| (n - 1) as u64).collect(); // the last offset of each
    let mut offsets = vec![0u64; extents.len()];
    let mut index = index_at(access.rest, coefficients, starts, &offsets);
    loop {
        if index >= access.len as u64 {
            return Some(offsets);
        }
        let mut j = offsets.len();
        loop {
            if j == 0 {
                return None;
            }
            j -= 1;
            if offsets[j] < counts[j] {
                offsets[j] += 1;
                index = index.wrapping_add(steps[j]);
                break;
            }
            index = index.wrapping_sub(steps[j].wrapping_mul(offsets[j]));
            offsets[j] = 0;
        }
    }
}

/// A launch's grid and block.
type Geometry = ([u32; 3], [u32; 3]);

/// Grid and block for one to three dimensions (innermost last in `counts`), as rs2gpu's Python runtime
/// computes them: blocks of `BLOCK_SIZE` threads, the innermost loop along x at least a warp wide, each
/// grid axis capped at the hardware limit, and the whole grid at `max_blocks` when given (the outer axes
/// give way first); the kernels stride over the rest.
fn launch_geometry(counts: &[u64], max_blocks: Option<u64>) -> Geometry {
    let block = u64::from(BLOCK_SIZE);
    let axis = |k: usize| if counts.len() > k { counts[counts.len() - 1 - k] } else { 1 };
    let (cx, cy, cz) = (axis(0), axis(1), axis(2));
    let (bx, by, bz) = match counts.len() {
        1 => (block, 1, 1),
        n => {
            let pow2 = |n: u64| n.checked_next_power_of_two().unwrap_or(1 << 63);
            let bx = block.min(pow2(cx).max(32));
            let by = if n == 2 { block / bx } else { (block / bx).min(pow2(cy)) };
            (bx, by, block / (bx * by))
        }
    };
    let grid = |count: u64, b: u64, cap: u64| count.div_ceil(b).min(cap);
    let (mut gx, mut gy, mut gz) = (grid(cx, bx, MAX_GRID_X), grid(cy, by, MAX_GRID_YZ), grid(cz, bz, MAX_GRID_YZ));
    if let Some(most) = max_blocks {
        gz = gz.min((most / (gx * gy)).max(1));
        gy = gy.min((most / (gx * gz)).max(1));
        gx = gx.min((most / (gy * gz)).max(1));
    }
    ([gx as u32, gy as u32, gz as u32], [bx as u32, by as u32, bz as u32])
}

/// The entry point a launch of `counts` runs, by its index in `entries`, and its grid and block: the first
/// whose condition holds (see `EntryKind`; `in_bounds`: every access the loop makes under a condition stays
/// in bounds, or no entry point checks them; `l2_bytes`: what of a loop's data the L2 takes;
/// `resident_threads`: the threads the device holds at once; `aligned`: whether a vector entry point's lanes
/// are aligned) and, where it needs a grid that covers the loop, has one.
fn choose_entry(entries: &[Entry], counts: &[u64], in_bounds: bool, l2_bytes: u64, resident_threads: u64,
                aligned: impl Fn(&Lanes) -> bool, max_blocks: Option<u64>) -> Option<(usize, Geometry)> {
    entries.iter().enumerate().find_map(|(index, entry)| {
        let runs = match entry.kind {
            EntryKind::Checked => true,
            EntryKind::General | EntryKind::Covering => in_bounds,
            EntryKind::Tiles => in_bounds && entry.grid.as_ref().is_some_and(|grid| {
                let iterations = counts.iter().try_fold(1u64, |product, &count| product.checked_mul(count));
                iterations.is_none_or(|iterations| iterations >= grid.fill.saturating_mul(resident_threads))
            }),
            EntryKind::Blocks | EntryKind::Warps | EntryKind::Columns =>
                in_bounds && (entry.fill == 0 || counts[0].saturating_mul(entry.fill) < resident_threads),
            EntryKind::Vector => in_bounds && entry.lanes.as_ref().is_some_and(&aligned),
            EntryKind::L2Adds => in_bounds && counts.first().and_then(|&c| c.checked_mul(entry.bytes_per_iteration))
                .is_some_and(|touched| touched <= l2_bytes),
        };
        if !runs {
            return None;
        }
        // several threads per iteration: one wave of blocks strides over the rest
        let max_blocks = if entry.threads_per_iteration > 0 { Some(resident_threads / u64::from(BLOCK_SIZE)) }
                         else { max_blocks };
        Some((index, entry_geometry(entry, counts, max_blocks)?))
    })
}

/// Grid and block of an entry point for `counts`: a grid-stride loop's (over groups of iterations for a
/// vector entry point of a single loop), or one that covers the counts, None where no grid does.
fn entry_geometry(entry: &Entry, counts: &[u64], max_blocks: Option<u64>) -> Option<Geometry> {
    if entry.threads_per_iteration > 0 {  // several threads per iteration of a single loop
        return Some(launch_geometry(&[counts[0].saturating_mul(entry.threads_per_iteration)], max_blocks));
    }
    match (&entry.lanes, &entry.grid) {
        (Some(lanes), grid) => {
            let mut groups = [0; 3];
            let groups = in_groups(counts, lanes.width, &mut groups);
            match grid {
                None => Some(launch_geometry(groups, max_blocks)),
                // a nest: one thread per group of a row, on a grid that covers them
                Some(grid) if counts.iter().all(|&count| count < grid.count_limit) =>
                    covering_grid(groups, grid.block, grid.count_limit),
                Some(_) => None,
            }
        }
        (None, Some(grid)) => covering_geometry(counts, grid),
        (None, None) => Some(launch_geometry(counts, max_blocks)),
    }
}

/// Grid and block for a launch's covering entry point, as rs2gpu's Python runtime (runtime/covering.py)
/// chooses them: the entry point's own block, or the shape that launches the fewest idle threads (blocks of
/// `BLOCK_SIZE` threads where the extents allow, x a multiple of a warp; then the narrowest x, the tallest
/// y), for one thread per tile of iterations; None when no grid covers the counts (x's with the entry
/// point's idle threads before it).
fn covering_geometry(counts: &[u64], covering: &Grid) -> Option<Geometry> {
    let mut threads = [0; 3];
    let threads = &mut threads[..counts.len()];
    threads.copy_from_slice(counts);
    let x = threads.last_mut()?;
    *x = x.saturating_add(covering.lead);
    if threads.iter().any(|&count| count >= covering.count_limit) {
        return None;
    }
    // outermost first: the last count is along x
    for (count, tile) in threads.iter_mut().rev().zip(covering.tile) {
        *count = count.div_ceil(tile);
    }
    covering_grid(threads, covering.block, covering.count_limit)
}

/// The same for an entry point that needs `block` (zeros: any) and every count below `count_limit`.
fn covering_grid(counts: &[u64], block: [u32; 3], count_limit: u64) -> Option<Geometry> {
    let axis = |k: usize| if counts.len() > k { counts[counts.len() - 1 - k] } else { 1 };
    let extents = [axis(0), axis(1), axis(2)];
    if extents.iter().any(|&count| count >= count_limit) {
        return None;
    }
    let (mut given, mut searched);
    let shapes: &mut dyn Iterator<Item = [u64; 3]> = if block[0] != 0 {
        given = std::iter::once(block.map(u64::from));
        &mut given
    } else {
        searched = covering_shapes(extents, counts.len());
        &mut searched
    };
    let limits = [MAX_GRID_X, MAX_GRID_YZ, MAX_GRID_YZ];
    let mut best = None; // (launched threads, -threads per block, x, -y) of the best so far
    let mut geometry = None;
    for shape in shapes {
        let grid = [0, 1, 2].map(|k| extents[k].div_ceil(shape[k]));
        if (0..3).any(|k| grid[k] > limits[k]) {
            continue;
        }
        let launched: u128 = (0..3).map(|k| u128::from(grid[k] * shape[k])).product();
        let rank = (launched, -((shape[0] * shape[1] * shape[2]) as i64), shape[0], -(shape[1] as i64));
        if best.is_none_or(|seen| rank < seen) {
            best = Some(rank);
            geometry = Some((grid.map(|g| g as u32), shape.map(|b| b as u32)));
        }
    }
    geometry
}

/// The candidate blocks of a covering launch: x a warp multiple, y and z powers of two no taller than needed.
fn covering_shapes(extents: [u64; 3], dims: usize) -> impl Iterator<Item = [u64; 3]> {
    let block = u64::from(BLOCK_SIZE);
    let pow2 = |n: u64| n.checked_next_power_of_two().unwrap_or(1 << 63);
    let (tallest, deepest) = (pow2(extents[1]), pow2(extents[2]));
    [32, 64, 128, 256].into_iter().flat_map(move |bx: u64| {
        let highest = (block / bx).min(tallest); // powers of two both, so a height the x width allows
        (0..9).map(|k| 1u64 << k).filter(move |&by| by <= highest && (dims != 2 || by == highest))
            .map(move |by| [bx, by, if dims == 2 { 1 } else { (block / (bx * by)).min(deepest) }])
    })
}
