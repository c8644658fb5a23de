//! The 2-D heat equation `∂u/∂t = Δu`, explicit in time, on a row-major grid of `width` columns.
//!
//! The boundary (first and last row and column) holds fixed temperatures: the steps write the interior
//! only, so `next` must start with the boundary of `cur` (a copy of it does).

// Kernels are index loops by design: each `for i in range` is one parallel loop on the GPU.
#![allow(clippy::needless_range_loop)]

use rs2gpu::kernel;

/// One step: `next = cur + alpha * (the five-point Laplacian of cur)` in the interior.
#[kernel]
pub fn heat_step(next: &mut [f64], cur: &[f64], width: usize, alpha: f64) {
    let rows = cur.len() / width;
    for i in 1..rows - 1 {
        for j in 1..width - 1 {
            let c = i * width + j;
            next[c] = cur[c] + alpha * (cur[c - width] + cur[c + width] + cur[c - 1] + cur[c + 1] - 4.0 * cur[c]);
        }
    }
}

/// `2 * pairs` steps in one call, the time loop on the host: `a` → `b` → `a` per pair, the result in `a`.
#[kernel]
pub fn heat_steps(a: &mut [f64], b: &mut [f64], width: usize, alpha: f64, pairs: usize) {
    let rows = a.len() / width;
    for _ in 0..pairs {
        for i in 1..rows - 1 {
            for j in 1..width - 1 {
                let c = i * width + j;
                b[c] = a[c] + alpha * (a[c - width] + a[c + width] + a[c - 1] + a[c + 1] - 4.0 * a[c]);
            }
        }
        for i in 1..rows - 1 {
            for j in 1..width - 1 {
                let c = i * width + j;
                a[c] = b[c] + alpha * (b[c - width] + b[c + width] + b[c - 1] + b[c + 1] - 4.0 * b[c]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{heat_step, heat_steps};

    #[test]
    fn a_step_spreads_a_hot_cell_to_its_four_neighbours() {
        let mut cur = [0.0; 25];
        cur[12] = 1.0; // the middle of a 5×5 grid
        let mut next = cur;
        heat_step(&mut next, &cur, 5, 0.25);
        assert_eq!(next[12], 0.0);
        for c in [7, 11, 13, 17] {
            assert_eq!(next[c], 0.25);
        }
        assert_eq!(next.iter().sum::<f64>(), 1.0);
    }

    #[test]
    fn a_step_leaves_the_boundary_as_it_is() {
        let cur: Vec<f64> = (0..20).map(|k| k as f64).collect();
        let mut next = vec![-1.0; 20];
        heat_step(&mut next, &cur, 5, 0.1);
        for c in [0, 1, 2, 3, 4, 5, 9, 10, 14, 15, 16, 17, 18, 19] {
            assert_eq!(next[c], -1.0);
        }
    }

    #[test]
    fn a_linear_profile_is_steady() {
        // Δu = 0 for u linear in the row: the interior keeps its values exactly.
        let cur: Vec<f64> = (0..30).map(|k| (k / 6) as f64).collect();
        let mut next = cur.clone();
        heat_step(&mut next, &cur, 6, 0.2);
        assert_eq!(next, cur);
    }

    #[test]
    fn heat_steps_is_heat_step_twice_per_pair() {
        let start: Vec<f64> = (0..48).map(|k| ((k * 7) % 11) as f64).collect();
        let (mut a, mut b) = (start.clone(), start.clone());
        heat_steps(&mut a, &mut b, 8, 0.2, 3);
        let mut u = start.clone();
        for _ in 0..6 {
            let mut v = u.clone();
            heat_step(&mut v, &u, 8, 0.2);
            u = v;
        }
        assert_eq!(a, u);
    }
}
