//! `#[repr(C)]` structs: slices of them, field updates, struct literals, and `impl` blocks with methods.

use rs2gpu::kernel;

/// One pixel, 8 bits per channel.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Rgb {
    pub r: u8,
    pub g: u8,
    pub b: u8,
}

/// A particle in the plane.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Particle {
    pub x: f32,
    pub y: f32,
    pub vx: f32,
    pub vy: f32,
}

/// A point in space.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Vec3 {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

/// An axis-aligned box, `lo` its smallest corner and `hi` its largest.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Aabb {
    pub lo: Vec3,
    pub hi: Vec3,
}

/// A complex number.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Complex {
    pub re: f64,
    pub im: f64,
}

impl Rgb {
    /// Rec. 601 luma in `[0, 255]`.
    pub fn luma(self) -> f32 {
        0.299 * self.r as f32 + 0.587 * self.g as f32 + 0.114 * self.b as f32
    }
}

impl Vec3 {
    pub fn dot(self, o: Vec3) -> f64 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
}

impl Complex {
    pub const fn new(re: f64, im: f64) -> Complex {
        Complex { re, im }
    }
}

/// Rec. 601 luma of a pixel, as a free function.
fn luma(p: Rgb) -> f32 {
    0.299 * p.r as f32 + 0.587 * p.g as f32 + 0.114 * p.b as f32
}

/// Product of two complex numbers.
fn cmul(a: Complex, b: Complex) -> Complex {
    Complex { re: a.re * b.re - a.im * b.im, im: a.re * b.im + a.im * b.re }
}

/// Colour to grey with a helper function: `out[i] = luma(px[i])`.
#[kernel]
pub fn gray_from_rgb(out: &mut [f32], px: &[Rgb]) {
    for i in 0..out.len() {
        out[i] = luma(px[i]);
    }
}

/// Colour to grey with the `Rgb::luma` method: `out[i] = px[i].luma()`.
pub fn gray_from_rgb_method(out: &mut [f32], px: &[Rgb]) {
    for i in 0..out.len() {
        out[i] = px[i].luma();
    }
}

/// Inverts every channel of an image in place.
#[kernel]
pub fn invert_rgb(px: &mut [Rgb]) {
    for p in px.iter_mut() {
        p.r = 255 - p.r;
        p.g = 255 - p.g;
        p.b = 255 - p.b;
    }
}

/// One explicit Euler step of free particles, field by field.
#[kernel]
pub fn advance_particles(ps: &mut [Particle], dt: f32) {
    for i in 0..ps.len() {
        ps[i].x += ps[i].vx * dt;
        ps[i].y += ps[i].vy * dt;
    }
}

/// Clamps points into a box passed by reference.
#[kernel]
pub fn clip_to_box(ps: &mut [Vec3], b: &Aabb) {
    for i in 0..ps.len() {
        let p = ps[i];
        ps[i] = Vec3 {
            x: p.x.max(b.lo.x).min(b.hi.x),
            y: p.y.max(b.lo.y).min(b.hi.y),
            z: p.z.max(b.lo.z).min(b.hi.z),
        };
    }
}

/// Squared lengths with the `Vec3::dot` method: `out[i] = v[i].dot(v[i])`.
pub fn squared_lengths_method(out: &mut [f64], v: &[Vec3]) {
    for i in 0..out.len() {
        out[i] = v[i].dot(v[i]);
    }
}

/// Elementwise complex product through a helper returning a struct.
#[kernel]
pub fn complex_products(out: &mut [Complex], a: &[Complex], b: &[Complex]) {
    for i in 0..out.len() {
        out[i] = cmul(a[i], b[i]);
    }
}

/// Complex conjugates built with the associated function `Complex::new`.
pub fn conjugates_new(out: &mut [Complex], a: &[Complex]) {
    for i in 0..out.len() {
        out[i] = Complex::new(a[i].re, -a[i].im);
    }
}
