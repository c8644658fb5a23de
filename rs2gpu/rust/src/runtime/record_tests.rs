//! What the host reads back after a call: the device's panic record (`decode_panic`), the reductions'
//! result words (`Results::value`), and the errors both become (`device_panic`, `refused`).

use super::*;

static KERNEL: KernelSource = KernelSource {
    name: "k",
    file: "k.cu",
    cuda: "",
    fast_math: false,
    launches: &[],
    panics: &[
        PanicSite { site: 1, kind: "bounds", source: "src/lib.rs:4:9" },
        PanicSite { site: 2, kind: "div", source: "src/lib.rs:5:13" },
        PanicSite { site: 3, kind: "rem", source: "src/lib.rs:6:13" },
    ],
    result_words: 0,
};

/// The record a failure leaves, as the device writes it (`rs2gpu_record_panic` in templates/prelude_common.j2):
/// word 0 is `key << 16 | site`, words 1 to 9 `key << 16 | piece`, the pieces the site, then the index and
/// the len 16 bits at a time, lowest first; word 10 the number of the launch that recorded.
fn record(key: u64, site: u32, index: u64, len: u64) -> [u64; PANIC_RECORD_BYTES / 8] {
    let piece = |k: usize| match k {
        0 => u64::from(site),
        1..=4 => (index >> (16 * (k - 1))) & 0xffff,
        _ => (len >> (16 * (k - 5))) & 0xffff,
    };
    let mut words = [0; PANIC_RECORD_BYTES / 8];
    words[0] = key << 16 | u64::from(site);
    for k in 0..9 {
        words[1 + k] = key << 16 | piece(k);
    }
    words[10] = 1;
    words
}

#[test]
fn an_empty_record_is_no_panic() {
    assert_eq!(decode_panic(&[0; PANIC_RECORD_BYTES / 8]).ok(), Some(None));
}

#[test]
fn a_record_gives_back_the_site_index_and_len() {
    for (site, index, len) in [(1, 8, 8), (2, 0, 0), (7, 0x0123_4567_89ab_cdef, u64::MAX), (65535, u64::MAX, 1)] {
        let decoded = decode_panic(&record(0xffff_ffff_fffe, site, index, len)).ok();
        assert_eq!(decoded, Some(Some((site, index, len))));
    }
}

#[test]
fn a_record_with_pieces_of_two_failures_is_an_abi_error() {
    let mut words = record(41, 1, 300, 10);
    words[3] = 40 << 16 | 7; // a piece of another failure, whose key lost
    assert!(matches!(decode_panic(&words), Err(Error::Abi(_))));
}

fn message(error: Error) -> (String, &'static str) {
    match error {
        Error::Panic { message, source, .. } => (message, source),
        other => panic!("expected a panic, not {other}"),
    }
}

#[test]
fn a_device_panic_reads_as_rusts() {
    let bounds = "index out of bounds: the len is 10 but the index is 12".to_string();
    assert_eq!(message(KERNEL.device_panic(1, 12, 10)), (bounds, "src/lib.rs:4:9"));
    // the index of a division's check says which of its panics it is: 0 a zero divisor, else an overflow
    assert_eq!(message(KERNEL.device_panic(2, 0, 0)), ("attempt to divide by zero".to_string(), "src/lib.rs:5:13"));
    assert_eq!(message(KERNEL.device_panic(2, 1, 0)).0, "attempt to divide with overflow");
    assert_eq!(message(KERNEL.device_panic(3, 0, 0)).0, "attempt to calculate the remainder with a divisor of zero");
    assert_eq!(message(KERNEL.device_panic(3, 1, 0)).0, "attempt to calculate the remainder with overflow");
    assert_eq!(message(KERNEL.device_panic(9, 0, 0)), ("panic at check site 9".to_string(), ""));
}

#[test]
fn a_refused_launch_is_the_kernels_panic_or_race() {
    let out_of_bounds = RangeError::OutOfBounds { len: 4, index: 18_446_744_073_709_551_615, source: "src/lib.rs:4:9" };
    let (text, source) = message(KERNEL.refused(out_of_bounds));
    assert_eq!(text, "index out of bounds: the len is 4 but the index is 18446744073709551615");
    assert_eq!(source, "src/lib.rs:4:9");
    assert_eq!(message(KERNEL.refused(RangeError::Panic("attempt to divide by zero"))),
               ("attempt to divide by zero".to_string(), ""));
    let race = KERNEL.refused(RangeError::Race("src/lib.rs:7:9"));
    assert!(matches!(race, Error::Race { kernel: "k", source: "src/lib.rs:7:9" }));
    assert_eq!(race.to_string(), "kernel `k`: with these arguments, two iterations of the loop would write the \
                                  same element at src/lib.rs:7:9 (the row stride is shorter than the row); nothing \
                                  was launched");
}

#[test]
fn errors_say_where_and_during_what() {
    let panic = Error::Panic { kernel: "k", message: "attempt to divide by zero".into(), source: "src/lib.rs:5:13" };
    assert_eq!(panic.to_string(), "kernel `k` panicked at src/lib.rs:5:13:\nattempt to divide by zero");
    let out_of_memory = "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".to_string();
    let failed = Error::Driver { call: "cuMemAlloc", code: 2, message: out_of_memory, context: String::new() };
    let during = failed.during("loading kernel `k`");
    assert_eq!(during.to_string(),
               "loading kernel `k`: cuMemAlloc failed with CUDA_ERROR_OUT_OF_MEMORY (out of memory) (status 2)");
    // the innermost context is kept: the outer caller knows less about what failed
    assert_eq!(during.during("running kernel `k`").to_string(),
               "loading kernel `k`: cuMemAlloc failed with CUDA_ERROR_OUT_OF_MEMORY (out of memory) (status 2)");
    assert!(Error::Unavailable("no driver".into()).is_unavailable());
    assert!(!panic.is_unavailable());
}

#[test]
fn a_result_word_holds_its_value_in_its_low_bytes() {
    // the device writes a reduction's result as its own type at the word's address, and host and device are
    // little-endian: the value is in the word's low bytes, whatever the high ones hold
    let results = Results { words: vec![2.5f64.to_bits(), 0xdead_beef_0000_0000 | u64::from((-5i32) as u32),
                                        0xffff_ffff_0000_0000 | u64::from(1.5f32.to_bits()), 1, u64::MAX] };
    assert_eq!(results.value::<f64>(0), 2.5);
    assert_eq!(results.value::<i32>(1), -5);
    assert_eq!(results.value::<f32>(2), 1.5);
    assert!(results.value::<bool>(3));
    assert_eq!(results.value::<u64>(4), u64::MAX);
    assert_eq!(results.value::<i8>(4), -1);
}
