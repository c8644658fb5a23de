//! The architecture a device compiles for (`device_arch`), and the compile cache's key (`fnv1a`) and its
//! entries on disk (`write_cached`, `read_cached`): a damaged entry must read as a miss, never as a cubin
//! the driver would load.

use super::*;

/// A folder of its own under the system's temporary folder, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let folder = std::env::temp_dir().join(format!("rs2gpu-cache-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&folder);
        Scratch(folder)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn the_key_is_fnv1a_of_each_part_after_its_length() {
    // FNV-1a 64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3): of nothing, the offset basis; of the
    // bytes 01 00 00 00 00 00 00 00 61 (the length 1 as 8 little-endian bytes, then "a"), 0x529a4ddc8ff56bbf
    assert_eq!(fnv1a(&[]), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a(&[b"a"]), 0x529a_4ddc_8ff5_6bbf);
}

#[test]
fn the_key_tells_apart_parts_split_differently() {
    // without the lengths, a source ending where the options begin could share a key with another
    assert_ne!(fnv1a(&[b"ab", b"c"]), fnv1a(&[b"a", b"bc"]));
    assert_ne!(fnv1a(&[b"abc"]), fnv1a(&[b"abc", b""]));
}

#[test]
fn a_written_entry_reads_back() {
    let scratch = Scratch::new("written");
    let path = scratch.0.join("rust").join("k-sm_90-0123.cubin");
    let cubin: Vec<u8> = (0..=255).collect();
    write_cached(&path, &cubin);
    assert_eq!(read_cached(&path), Some(cubin));
    // no temporary file is left beside it
    assert_eq!(std::fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
}

#[test]
fn a_damaged_or_short_entry_is_a_miss() {
    let scratch = Scratch::new("damaged");
    let path = scratch.0.join("k.cubin");
    assert_eq!(read_cached(&path), None); // no file
    write_cached(&path, b"a cubin");
    let whole = std::fs::read(&path).unwrap();
    assert_eq!(whole.len(), b"a cubin".len() + 8); // the cubin, then its hash
    let mut flipped = whole.clone();
    flipped[2] ^= 1;
    std::fs::write(&path, &flipped).unwrap();
    assert_eq!(read_cached(&path), None);
    std::fs::write(&path, &whole[..whole.len() - 1]).unwrap();
    assert_eq!(read_cached(&path), None);
    std::fs::write(&path, &whole[..7]).unwrap();
    assert_eq!(read_cached(&path), None);
    std::fs::write(&path, &whole).unwrap();
    assert_eq!(read_cached(&path), Some(b"a cubin".to_vec()));
}

#[test]
fn a_cache_that_cannot_be_written_is_skipped() {
    let scratch = Scratch::new("unwritable");
    std::fs::create_dir_all(&scratch.0).unwrap();
    let file = scratch.0.join("a-file");
    std::fs::write(&file, b"").unwrap();
    let path = file.join("k.cubin"); // its folder would be a file
    write_cached(&path, b"a cubin");
    assert_eq!(read_cached(&path), None);
}

#[test]
fn hopper_compiles_for_its_architecture_specific_features_and_others_for_their_own() {
    assert_eq!(device_arch(9, 0), "sm_90a");
    assert_eq!((device_arch(8, 0), device_arch(8, 9), device_arch(10, 0)),
               ("sm_80".to_string(), "sm_89".to_string(), "sm_100".to_string()));
}
