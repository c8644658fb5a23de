//! Runs this crate's kernels on the GPU through the generated API, on random inputs, and compares each
//! result with the same Rust function run on the CPU.
//!
//! Usage: `rs2gpu-cargo-hook [N]` (default N = 1000003). Exit status: 0 when every GPU result matches,
//! 1 on a mismatch or a GPU error, 2 when this machine has no usable GPU (no driver, no NVRTC, no device).

use std::process::ExitCode;
use std::time::Instant;

use rs2gpu_cargo_hook::kernels::{self, DeviceBuffer, Error, Gpu};
use rs2gpu_cargo_hook::{axpy, differences, dot, laplacian, min_max, real_roots, scale, smooth, triad};

/// xorshift64*: reproducible inputs without dependencies.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    fn f64s(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.unit()).collect()
    }

    fn f32s(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.unit() as f32).collect()
    }
}

#[derive(Default)]
struct Report {
    passed: usize,
    failed: usize,
}

impl Report {
    fn check(&mut self, what: &str, ok: bool, detail: String, seconds: f64) {
        let verdict = if ok { "ok" } else { "MISMATCH" };
        println!("  {what:<44} {verdict:<9} {:>9.3} ms  {detail}", seconds * 1e3);
        if ok {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
    }
}

fn bitwise_equal<T: PartialEq + Copy + std::fmt::Debug>(gpu: &[T], cpu: &[T]) -> (bool, String) {
    match gpu.iter().zip(cpu).position(|(g, c)| g != c) {
        None if gpu.len() == cpu.len() => (true, "bitwise equal".to_string()),
        None => (false, format!("lengths {} and {}", gpu.len(), cpu.len())),
        Some(i) => (false, format!("first difference at [{i}]: GPU {:?}, CPU {:?}", gpu[i], cpu[i])),
    }
}

/// A sum in another order: equal up to rounding, relative to the sum of the magnitudes.
fn close_sums(gpu: f64, cpu: f64, magnitude: f64) -> (bool, String) {
    let error = (gpu - cpu).abs() / magnitude.max(f64::MIN_POSITIVE);
    (error <= 1e-12, format!("GPU {gpu:.15e}, CPU {cpu:.15e}, relative difference {error:.1e}"))
}

fn timed<T>(f: impl FnOnce() -> Result<T, Error>) -> Result<(T, f64), Error> {
    let start = Instant::now();
    let value = f()?;
    Ok((value, start.elapsed().as_secs_f64()))
}

fn run(gpu: &Gpu, n: usize, report: &mut Report) -> Result<(), Error> {
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let (b, c) = (random.f64s(n), random.f64s(n));
    let alpha = random.unit();

    // Host slices in and out: each call copies what the transfer plan says. The first call of each
    // kernel compiles it (or finds it in the disk cache).
    let mut a_gpu = vec![0.0; n];
    let (_, seconds) = timed(|| kernels::triad(gpu, &mut a_gpu, &b, &c, alpha))?;
    let mut a_cpu = vec![0.0; n];
    triad(&mut a_cpu, &b, &c, alpha);
    let (ok, detail) = bitwise_equal(&a_gpu, &a_cpu);
    report.check("triad (host slices, first call)", ok, detail, seconds);
    let (_, seconds) = timed(|| kernels::triad(gpu, &mut a_gpu, &b, &c, alpha))?;
    let (ok, detail) = bitwise_equal(&a_gpu, &a_cpu);
    report.check("triad (host slices, compiled)", ok, detail, seconds);

    let (dot_gpu, seconds) = timed(|| kernels::dot(gpu, &b, &c))?;
    let magnitude: f64 = b.iter().zip(&c).map(|(x, y)| (x * y).abs()).sum();
    let (ok, detail) = close_sums(dot_gpu, dot(&b, &c), magnitude);
    report.check("dot (reduction)", ok, detail, seconds);

    let mut x_gpu = random.f32s(n);
    let mut x_cpu = x_gpu.clone();
    let s = random.unit() as f32;
    let (_, seconds) = timed(|| kernels::scale(gpu, &mut x_gpu, s))?;
    scale(&mut x_cpu, s);
    let (ok, detail) = bitwise_equal(&x_gpu, &x_cpu);
    report.check("scale (in place)", ok, detail, seconds);

    // 16 bytes of x and y an iteration: in the L2 (atomic adds there) up to its size, loads beyond it.
    for (what, len) in [("in the L2", n), ("beyond the L2", 8 << 20)] {
        let x = random.f64s(len);
        let mut y_gpu = random.f64s(len);
        let mut y_cpu = y_gpu.clone();
        let a = random.unit();
        let (_, seconds) = timed(|| kernels::axpy(gpu, &mut y_gpu, &x, a))?;
        axpy(&mut y_cpu, &x, a);
        let (ok, detail) = bitwise_equal(&y_gpu, &y_cpu);
        report.check(&format!("axpy ({len} elements, {what})"), ok, detail, seconds);
    }

    let u = random.f32s(n);
    let mut out_gpu = vec![7.0f32; n];
    let mut out_cpu = out_gpu.clone();
    let (_, seconds) = timed(|| kernels::smooth(gpu, &mut out_gpu, &u, 0.25))?;
    smooth(&mut out_cpu, &u, 0.25);
    let (ok, detail) = bitwise_equal(&out_gpu, &out_cpu);
    report.check("smooth (loop 1..n - 1)", ok, detail, seconds);

    // Two pairs of iterations per thread where the slices' elements are 16-byte aligned (x[0] and y[0]
    // here, fresh device buffers): one load of y's lanes and one of the element after them.
    let y = random.f64s(n + 1);
    let (mut x_gpu, mut x_cpu) = (vec![0.0; n], vec![0.0; n]);
    let (_, seconds) = timed(|| kernels::differences(gpu, &mut x_gpu, &y))?;
    differences(&mut x_cpu, &y);
    let (ok, detail) = bitwise_equal(&x_gpu, &x_cpu);
    report.check("differences (reads at two offsets)", ok, detail, seconds);

    // A nest: one thread per row and pair of columns, each row's stores in one 16-byte store per pair
    // where the row's first pair is 16-byte aligned (every row here: 1002 columns), and u's rows above
    // and below read the same way.
    let (cols, rows) = (1002, n / 1002);
    let u = random.f64s(cols * rows);
    let (mut grid_gpu, mut grid_cpu) = (vec![5.0; cols * rows], vec![5.0; cols * rows]);
    let (_, seconds) = timed(|| kernels::laplacian(gpu, &mut grid_gpu, &u, cols, rows))?;
    laplacian(&mut grid_cpu, &u, cols, rows);
    let (ok, detail) = bitwise_equal(&grid_gpu, &grid_cpu);
    report.check("laplacian (a nest, rows in pairs)", ok, detail, seconds);

    let ints: Vec<i32> = (0..n).map(|_| random.next() as i32).collect();
    let (range_gpu, seconds) = timed(|| kernels::min_max(gpu, &ints))?;
    let range_cpu = min_max(&ints);
    report.check("min_max (two reductions)", range_gpu == range_cpu,
                 format!("GPU {range_gpu:?}, CPU {range_cpu:?}"), seconds);

    // Calls back to back, each on other data: each one returns once its launch has set the done word,
    // which it clears first, so a word the previous call set cannot hand back that call's results.
    let arrays: Vec<Vec<i32>> = (0..64).map(|_| (0..n / 16).map(|_| random.next() as i32).collect()).collect();
    let buffers = arrays.iter().map(|a| DeviceBuffer::from_slice(gpu, a)).collect::<Result<Vec<_>, _>>()?;
    let (ranges, seconds) =
        timed(|| buffers.iter().map(|b| kernels::min_max_on(gpu, b)).collect::<Result<Vec<_>, _>>())?;
    let wrong = arrays.iter().zip(&ranges).filter(|&(a, range)| min_max(a) != *range).count();
    report.check("min_max on 64 buffers back to back", wrong == 0, format!("{wrong} of 64 differ"), seconds);

    // Writes under a condition: the host finds them in bounds (and the launch leaves out their device
    // checks), or not, and then the device finds the first one out of bounds, as Rust would.
    let d: Vec<f64> = random.f64s(n).iter().map(|v| v - 0.5).collect();
    let (mut roots_gpu, mut flag_gpu) = (vec![9.0; n], vec![9.0; n]);
    let (mut roots_cpu, mut flag_cpu) = (roots_gpu.clone(), flag_gpu.clone());
    let (_, seconds) = timed(|| kernels::real_roots(gpu, &mut roots_gpu, &d, &mut flag_gpu))?;
    real_roots(&mut roots_cpu, &d, &mut flag_cpu);
    let (ok, detail) = bitwise_equal(&[roots_gpu, flag_gpu].concat(), &[roots_cpu, flag_cpu].concat());
    report.check("real_roots (conditional writes in bounds)", ok, detail, seconds);
    let short = n / 2;
    let mut flags = vec![0.0; short];
    let refused = kernels::real_roots(gpu, &mut vec![0.0; n], &d, &mut flags);
    let expected = format!("index out of bounds: the len is {short} but the index is {short}");
    let ok = matches!(&refused, Err(Error::Panic { message, .. }) if *message == expected);
    let detail = refused.err().map_or(String::new(), |e| e.to_string().replace('\n', " "));
    report.check("real_roots with `flag` too short panics", ok, detail, 0.0);

    // A call that would index out of bounds panics as the Rust function would, before any device work.
    let mut short = vec![1.0; 10];
    let refused = kernels::triad(gpu, &mut short, &b[..9], &c[..10], alpha);
    let ok = matches!(&refused, Err(Error::Panic { .. })) && short == vec![1.0; 10];
    let detail = refused.err().map_or(String::new(), |e| e.to_string().replace('\n', " "));
    report.check("triad with `b` too short is refused", ok, detail, 0.0);

    // Device-resident data: upload once, run many kernels, download once.
    let steps = 20;
    let ((a_dev, dot_dev), seconds) = timed(|| {
        let mut a = DeviceBuffer::zeroed(gpu, n)?;
        let b_dev = DeviceBuffer::from_slice(gpu, &b)?;
        let mut c_dev = DeviceBuffer::from_slice(gpu, &c)?;
        for _ in 0..steps {
            kernels::triad_on(gpu, &mut a, &b_dev, &c_dev, alpha)?;
            kernels::triad_on(gpu, &mut c_dev, &a, &b_dev, -alpha)?;
        }
        let dot = kernels::dot_on(gpu, &a, &c_dev)?;
        Ok((a.to_vec()?, dot))
    })?;
    let (mut a_ref, mut c_ref) = (vec![0.0; n], c.clone());
    for _ in 0..steps {
        triad(&mut a_ref, &b, &c_ref, alpha);
        triad(&mut c_ref, &a_ref, &b, -alpha);
    }
    let (ok, detail) = bitwise_equal(&a_dev, &a_ref);
    report.check(&format!("{} triads on DeviceBuffers", 2 * steps), ok, detail, seconds);
    let magnitude: f64 = a_ref.iter().zip(&c_ref).map(|(x, y)| (x * y).abs()).sum();
    let (ok, detail) = close_sums(dot_dev, dot(&a_ref, &c_ref), magnitude);
    report.check("dot of DeviceBuffers", ok, detail, 0.0);

    // The same triads on two streams at once, each on buffers of its own: a download after the calls
    // (on the default stream) waits for them.
    let (results, seconds) = timed(|| {
        let streams = [gpu.stream()?, gpu.stream()?];
        let mut buffers = Vec::new();
        for stream in &streams {
            buffers.push((DeviceBuffer::zeroed(stream, n)?, DeviceBuffer::from_slice(stream, &b)?,
                          DeviceBuffer::from_slice(stream, &c)?));
        }
        for _ in 0..steps {
            for (stream, (a, b_dev, c_dev)) in streams.iter().zip(buffers.iter_mut()) {
                kernels::triad_on(stream, a, b_dev, c_dev, alpha)?;
                kernels::triad_on(stream, c_dev, a, b_dev, -alpha)?;
            }
        }
        streams[0].synchronize()?;
        buffers.iter().map(|(a, _, _)| a.to_vec()).collect::<Result<Vec<_>, Error>>()
    })?;
    let ok = results.iter().all(|a| bitwise_equal(a, &a_ref).0);
    report.check(&format!("{} triads on each of two streams", 2 * steps), ok, String::new(), seconds);
    Ok(())
}

fn main() -> ExitCode {
    let n = match std::env::args().nth(1).map(|arg| arg.parse::<usize>()) {
        None => 1_000_003,
        Some(Ok(n)) if n >= 2 => n,
        Some(_) => {
            eprintln!("usage: rs2gpu-cargo-hook [N], with N >= 2 elements");
            return ExitCode::from(2);
        }
    };
    let gpu = match Gpu::new() {
        Ok(gpu) => gpu,
        Err(e) if e.is_unavailable() => {
            eprintln!("no GPU to run on: {e}");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("GPU: {}", gpu.describe());
    println!("{n} elements, GPU results against the same Rust functions on the CPU:");
    let mut report = Report::default();
    if let Err(e) = run(&gpu, n, &mut report) {
        if e.is_unavailable() {
            eprintln!("no GPU to run on: {e}");
            return ExitCode::from(2);
        }
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    println!("{} passed, {} failed", report.passed, report.failed);
    if report.failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
