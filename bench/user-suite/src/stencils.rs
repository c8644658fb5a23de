//! Jacobi-style stencils on row-major grids: the interior points get the weighted sum of their
//! neighbours, the boundary of `out` is left as it was.

use rs2gpu::kernel;

/// 2-D 5-point stencil on a `rows × cols` grid.
#[kernel]
pub fn stencil_2d_f32(out: &mut [f32], u: &[f32], rows: usize, cols: usize, w: f32) {
    for i in 1..rows - 1 {
        for j in 1..cols - 1 {
            let c = i * cols + j;
            out[c] = u[c] + w * (u[c - cols] + u[c + cols] + u[c - 1] + u[c + 1] - 4.0 * u[c]);
        }
    }
}

/// 3-D 7-point stencil on an `nz × ny × nx` grid (x fastest).
#[kernel]
pub fn stencil_3d_f32(out: &mut [f32], u: &[f32], nz: usize, ny: usize, nx: usize, w: f32) {
    let plane = ny * nx;
    for k in 1..nz - 1 {
        for j in 1..ny - 1 {
            for i in 1..nx - 1 {
                let c = k * plane + j * nx + i;
                out[c] = u[c]
                    + w * (u[c - plane] + u[c + plane] + u[c - nx] + u[c + nx] + u[c - 1] + u[c + 1]
                        - 6.0 * u[c]);
            }
        }
    }
}
