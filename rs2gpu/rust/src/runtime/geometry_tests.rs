//! Launch geometry: the grid and block of a launch (`launch_geometry`), of a covering entry point
//! (`covering_geometry`, `covering_grid`) and of a vector entry point's groups (`in_groups`), as the rules
//! in their comments (and rs2gpu's Python runtime, runtime/base.py and runtime/covering.py) give them.

use super::*;

const BLOCK: u64 = BLOCK_SIZE as u64;
/// An H200's 132 multiprocessors, each given `REDUCTION_BLOCKS_PER_MULTIPROCESSOR` blocks.
const H200_REDUCTION_BLOCKS: u64 = 132 * REDUCTION_BLOCKS_PER_MULTIPROCESSOR;
/// The threads an H200 holds at once.
const H200_THREADS: u64 = H200_REDUCTION_BLOCKS * BLOCK;

fn product(sizes: [u32; 3]) -> u64 {
    sizes.iter().map(|&size| u64::from(size)).product()
}

#[test]
fn a_single_loop_runs_in_full_blocks_along_x() {
    assert_eq!(launch_geometry(&[1000], None), ([4, 1, 1], [256, 1, 1])); // ceil(1000 / 256) blocks
    assert_eq!(launch_geometry(&[1], None), ([1, 1, 1], [256, 1, 1]));
    assert_eq!(launch_geometry(&[256], None), ([1, 1, 1], [256, 1, 1]));
    assert_eq!(launch_geometry(&[257], None), ([2, 1, 1], [256, 1, 1]));
    // the grid stops at the hardware's limit; the kernel strides over the rest
    assert_eq!(launch_geometry(&[1 << 40], None), ([(1 << 31) - 1, 1, 1], [256, 1, 1]));
    // a launch with reductions: one wave of blocks
    assert_eq!(launch_geometry(&[1_000_000_000], Some(H200_REDUCTION_BLOCKS)), ([1056, 1, 1], [256, 1, 1]));
    assert_eq!(launch_geometry(&[1000], Some(H200_REDUCTION_BLOCKS)), ([4, 1, 1], [256, 1, 1]));
}

#[test]
fn a_nest_gives_the_innermost_loop_x_at_least_a_warp_wide() {
    // 10 columns: x a warp (the next power of two, 16, is narrower), y the rest of the block's 256
    assert_eq!(launch_geometry(&[1000, 10], None), ([1, 125, 1], [32, 8, 1]));
    // a long row takes the whole block
    assert_eq!(launch_geometry(&[3, 1_000_000], None), ([3907, 3, 1], [256, 1, 1]));
    // three loops: x the row's power of two (128), y no taller than its loop needs, z what remains
    assert_eq!(launch_geometry(&[100, 100, 100], None), ([1, 50, 100], [128, 2, 1]));
    assert_eq!(launch_geometry(&[64, 2, 8], None), ([1, 1, 16], [32, 2, 4]));
    assert_eq!(launch_geometry(&[4, 32, 25], None), ([1, 4, 4], [32, 8, 1]));
    // y and z stop at their limit of 65535 blocks
    assert_eq!(launch_geometry(&[100_000_000, 1], None), ([1, 65535, 1], [32, 8, 1]));
}

#[test]
fn a_capped_nest_gives_way_on_its_outer_axes_first() {
    // 4 x 1000 blocks, at most 100: z has 1 already, y drops to 100 / 4 = 25, x keeps its 4
    assert_eq!(launch_geometry(&[1000, 1000], Some(100)), ([4, 25, 1], [256, 1, 1]));
    // 1 x 50 x 100 blocks, at most 1056: z drops to 1056 / 50 = 21, y keeps 50 (1056 / 21 = 50), x its 1
    assert_eq!(launch_geometry(&[100, 100, 100], Some(1056)), ([1, 50, 21], [128, 2, 1]));
}

#[test]
fn every_launch_has_full_blocks_and_covers_its_loops_or_strides() {
    let limits = [MAX_GRID_X, MAX_GRID_YZ, MAX_GRID_YZ];
    let samples = [1u64, 2, 7, 31, 32, 33, 100, 255, 256, 257, 1000, 65_536, 1 << 20, 1 << 33];
    for (n, &cx) in samples.iter().enumerate() {
        for &cy in &samples[n % 5..] {
            for counts in [vec![cx], vec![cy, cx], vec![cx % 1000 + 1, cy, cx], vec![cy, cx % 64 + 1, cx]] {
                let (grid, block) = launch_geometry(&counts, None);
                // the kernels' block reductions are written for full blocks
                assert_eq!(product(block), BLOCK, "{counts:?}");
                if counts.len() > 1 {
                    assert_eq!(block[0] % 32, 0, "{counts:?}: x a whole number of warps");
                }
                for axis in 0..counts.len() {
                    let count = counts[counts.len() - 1 - axis];
                    let launched = u64::from(grid[axis]) * u64::from(block[axis]);
                    assert!(launched >= count || u64::from(grid[axis]) == limits[axis], "{counts:?} axis {axis}");
                    assert!((1..=limits[axis]).contains(&u64::from(grid[axis])), "{counts:?} axis {axis}");
                }
                let (capped, same_block) = launch_geometry(&counts, Some(H200_REDUCTION_BLOCKS));
                assert_eq!(same_block, block);
                assert!(capped.iter().zip(grid).all(|(&c, g)| c <= g), "{counts:?}");
                assert!(product(capped) <= H200_REDUCTION_BLOCKS, "{counts:?}");
            }
        }
    }
}

fn covering(block: [u32; 3], lead: u64) -> Grid {
    Grid { block, count_limit: 1 << 31, lead, tile: [1, 1, 1], fill: 0 }
}

#[test]
fn a_covering_grid_uses_the_entry_points_own_block() {
    // a tiled product's 16 x 16 block over a 1000 x 1000 nest: ceil(1000 / 16) = 63 blocks each way
    assert_eq!(covering_geometry(&[1000, 1000], &covering([16, 16, 1], 0)), Some(([63, 63, 1], [16, 16, 1])));
    assert_eq!(covering_geometry(&[17, 15], &covering([16, 16, 1], 0)), Some(([1, 2, 1], [16, 16, 1])));
}

#[test]
fn a_thread_of_a_tiled_grid_covers_its_tile_of_iterations() {
    // 8 x 4 iterations a thread (x, y), 16 x 16 threads a block: blocks of 128 x 64 iterations
    let tiled = Grid { block: [16, 16, 1], count_limit: 1 << 31, lead: 0, tile: [8, 4, 1], fill: 0 };
    assert_eq!(covering_geometry(&[1000, 1000], &tiled), Some(([8, 16, 1], [16, 16, 1])));
    assert_eq!(covering_geometry(&[64, 129], &tiled), Some(([2, 1, 1], [16, 16, 1])));
    // the limit is on the iterations, not the threads
    assert_eq!(covering_geometry(&[1 << 31, 1], &tiled), None);
}

#[test]
fn idle_threads_before_the_first_iteration_can_take_one_more_block() {
    let row = covering([256, 1, 1], 1);
    assert_eq!(covering_geometry(&[255], &row), Some(([1, 1, 1], [256, 1, 1]))); // 1 + 255 threads
    assert_eq!(covering_geometry(&[256], &row), Some(([2, 1, 1], [256, 1, 1]))); // 1 + 256
    assert_eq!(covering_geometry(&[224], &covering([256, 1, 1], 31)), Some(([1, 1, 1], [256, 1, 1])));
}

#[test]
fn no_grid_covers_a_count_at_the_limit() {
    let limit = 1u64 << 31;
    assert_eq!(covering_geometry(&[limit, 4], &covering([0; 3], 0)), None);
    assert_eq!(covering_geometry(&[limit - 1], &covering([256, 1, 1], 1)), None); // the idle thread reaches it
    assert_eq!(covering_grid(&[5, limit - 1], [0; 3], limit), Some(([8_388_608, 5, 1], [256, 1, 1])));
    // rows of 32 take blocks of 32 x 8 (rows of 32 threads, 8 of them), and y has at most 65535 blocks
    assert_eq!(covering_grid(&[65_535 * 8, 32], [0; 3], limit), Some(([1, 65_535, 1], [32, 8, 1])));
    assert_eq!(covering_grid(&[65_535 * 8 + 1, 32], [0; 3], limit), None);
}

#[test]
fn a_searched_covering_block_launches_the_fewest_threads() {
    // 1000 x 1000: every warp-multiple width launches 1024 x 1000 threads; the narrowest x wins the tie
    assert_eq!(covering_grid(&[1000, 1000], [0; 3], 1 << 31), Some(([32, 125, 1], [32, 8, 1])));
    // 3 rows of 40: blocks of 32 x 8 take two a row, 64 x 8 threads; one block of 64 x 4 launches 64 x 4
    assert_eq!(covering_grid(&[3, 40], [0; 3], 1 << 31), Some(([1, 1, 1], [64, 4, 1])));
    // 7 x 5 x 3: 32 x 1 x 8 launches 32 * 5 * 8 threads, fewer than 32 x 8 x 1 (32 * 8 * 7) or 32 x 2 x 4
    // (32 * 6 * 8)
    assert_eq!(covering_grid(&[7, 5, 3], [0; 3], 1 << 31), Some(([1, 5, 1], [32, 1, 8])));
}

#[test]
fn every_covering_grid_covers_its_counts_in_blocks_of_whole_warps() {
    let samples = [1u64, 3, 31, 32, 33, 100, 464, 1000, 70_000];
    for &x in &samples {
        for &y in &samples {
            for counts in [vec![y, x], vec![x % 50 + 1, y, x]] {
                let (grid, block) = covering_grid(&counts, [0; 3], 1 << 31).expect("a grid covers them");
                assert_eq!(block[0] % 32, 0, "{counts:?}");
                assert!(product(block) <= BLOCK, "{counts:?}");
                for axis in 0..counts.len() {
                    let count = counts[counts.len() - 1 - axis];
                    assert!(u64::from(grid[axis]) * u64::from(block[axis]) >= count, "{counts:?} axis {axis}");
                }
            }
        }
    }
}

#[test]
fn a_vector_launch_groups_the_innermost_loop() {
    let mut groups = [0; 3];
    assert_eq!(in_groups(&[10], 4, &mut groups), &[3]); // 4 + 4 + 2
    assert_eq!(in_groups(&[5, 8], 2, &mut groups), &[5, 4]);
    assert_eq!(in_groups(&[3, 5, 1], 4, &mut groups), &[3, 5, 1]);
    assert_eq!(in_groups(&[], 4, &mut groups), &[] as &[u64]);
}

/// An entry point of kind `kind` with no grid, lanes or thresholds of its own; only a checked one records
/// panics.
const fn entry(kind: EntryKind, symbol: &'static str) -> Entry {
    Entry { kind, symbol, records_panics: matches!(kind, EntryKind::Checked), grid: None, lanes: None,
            bytes_per_iteration: 0, threads_per_iteration: 0, fill: 0 }
}

const GENERAL: Entry = entry(EntryKind::General, "k_0");
const CHECKED: Entry = entry(EntryKind::Checked, "k_0_checked");

/// The entry points of a streaming loop whose every access the host proves in bounds, in the order the
/// generated module lists them.
const STREAM: [Entry; 4] = [
    Entry { bytes_per_iteration: 24, ..entry(EntryKind::L2Adds, "k_0_l2_adds") },
    Entry { lanes: Some(Lanes { width: 2, pointers: &[0], offsets: &[0], start: 1 }),
            ..entry(EntryKind::Vector, "k_0_vector") },
    GENERAL,
    CHECKED,
];

fn chosen(entries: &[Entry], counts: &[u64], in_bounds: bool, l2_bytes: u64, aligned: bool) -> Option<&'static str> {
    let index = choose_entry(entries, counts, in_bounds, l2_bytes, H200_THREADS, |_| aligned, None)?.0;
    Some(["k_0_l2_adds", "k_0_vector", "k_0", "k_0_checked"][index])
}

#[test]
fn the_first_entry_point_whose_condition_holds_runs() {
    // 1000 iterations of 24 bytes fit in a 50 MB L2: the adds the L2 performs
    assert_eq!(chosen(&STREAM, &[1000], true, 50 << 20, true), Some("k_0_l2_adds"));
    // past the L2, 16-byte accesses where the lanes are aligned, else the loop as written
    assert_eq!(chosen(&STREAM, &[10_000_000], true, 50 << 20, true), Some("k_0_vector"));
    assert_eq!(chosen(&STREAM, &[10_000_000], true, 50 << 20, false), Some("k_0"));
}

#[test]
fn a_conditional_access_the_host_cannot_clear_runs_the_checked_entry_point() {
    // every other entry point leaves those checks out
    assert_eq!(chosen(&STREAM, &[1000], false, 50 << 20, true), Some("k_0_checked"));
    // without a checked one, the general entry point checks what it must itself
    assert_eq!(chosen(&STREAM[..3], &[1000], true, 0, false), Some("k_0"));
}

#[test]
fn a_covering_entry_point_runs_only_where_a_grid_covers_the_nest() {
    let nest = [
        Entry { grid: Some(covering([0; 3], 0)), ..entry(EntryKind::Covering, "k_0_covering") },
        GENERAL,
    ];
    assert_eq!(choose_entry(&nest, &[100, 100], true, 0, H200_THREADS, |_| true, None).map(|c| c.0), Some(0));
    // a count at the entry point's limit (its thread coordinates are 32-bit): the grid-stride loop
    assert_eq!(choose_entry(&nest, &[1 << 31, 2], true, 0, H200_THREADS, |_| true, None).map(|c| c.0), Some(1));
}

#[test]
fn a_tiles_entry_point_runs_where_its_tiles_give_every_multiprocessor_one() {
    // 128 x 128 iterations a block (8 x 8 a thread of 16 x 16): 8 iterations per thread the device holds
    let large = Grid { block: [16, 16, 1], count_limit: 1 << 31, lead: 0, tile: [8, 8, 1], fill: 8 };
    let product = [
        Entry { grid: Some(large), ..entry(EntryKind::Tiles, "k_0_tiles") },
        Entry { grid: Some(covering([16, 16, 1], 0)), ..entry(EntryKind::Covering, "k_0_covering") },
    ];
    let at = |counts: &[u64]| choose_entry(&product, counts, true, 0, H200_THREADS, |_| true, None);
    // 4096 x 4096 = 16.8 M iterations, at least 8 x 270,336: 32 x 32 blocks of 16 x 16
    assert_eq!(at(&[4096, 4096]), Some((0, ([32, 32, 1], [16, 16, 1]))));
    // 1024 x 1024 = 1 M, fewer: the covering entry point's smaller tiles
    assert_eq!(at(&[1024, 1024]).map(|c| c.0), Some(1));
    // one row as long as that, and one element shorter
    assert_eq!(at(&[1, 8 * H200_THREADS]).map(|c| c.0), Some(0));
    assert_eq!(at(&[1, 8 * H200_THREADS - 1]).map(|c| c.0), Some(1));
}

#[test]
fn a_warps_entry_point_runs_a_warp_per_iteration_where_the_conditional_accesses_are_in_bounds() {
    let rows = [
        Entry { threads_per_iteration: 32, ..entry(EntryKind::Warps, "k_0_warps") },
        GENERAL,
        CHECKED,
    ];
    // 1000 rows: 32 threads each, 125 blocks of 256
    assert_eq!(choose_entry(&rows, &[1000], true, 0, H200_THREADS, |_| true, None), Some((0, ([125, 1, 1], [256, 1, 1]))));
    // past one wave of blocks the warps stride over the rest
    assert_eq!(choose_entry(&rows, &[1 << 40], true, 0, H200_THREADS, |_| true, None),
               Some((0, ([H200_REDUCTION_BLOCKS as u32, 1, 1], [256, 1, 1]))));
    assert_eq!(choose_entry(&rows, &[1000], false, 0, H200_THREADS, |_| true, None).map(|c| c.0), Some(2));
}

#[test]
fn a_columns_entry_point_runs_where_the_loop_has_fewer_iterations_than_the_device_holds_threads() {
    let columns = [
        Entry { threads_per_iteration: 8, fill: 1, ..entry(EntryKind::Columns, "k_0_columns") },
        GENERAL,
    ];
    // 8192 columns: 8 threads each, 256 blocks of 256 (32 columns a block)
    assert_eq!(choose_entry(&columns, &[8192], true, 0, H200_THREADS, |_| true, None),
               Some((0, ([256, 1, 1], [256, 1, 1]))));
    // as many columns as the device holds threads: one thread per column fills it
    assert_eq!(choose_entry(&columns, &[H200_THREADS], true, 0, H200_THREADS, |_| true, None).map(|c| c.0), Some(1));
}

#[test]
fn a_blocks_entry_point_runs_where_a_warp_per_iteration_would_leave_the_device_partly_idle() {
    let rows = [
        Entry { threads_per_iteration: 256, fill: 32, ..entry(EntryKind::Blocks, "k_0_blocks") },
        Entry { threads_per_iteration: 32, ..entry(EntryKind::Warps, "k_0_warps") },
    ];
    // 100 rows: a block each
    assert_eq!(choose_entry(&rows, &[100], true, 0, H200_THREADS, |_| true, None), Some((0, ([100, 1, 1], [256, 1, 1]))));
    // as many rows as the device holds warps: a warp each
    assert_eq!(choose_entry(&rows, &[H200_THREADS / 32], true, 0, H200_THREADS, |_| true, None).map(|c| c.0), Some(1));
}
