//! How a launch's arguments are laid out for the driver (`Gathered`): each at its exact width from the first
//! byte of words of its own, one pointer per argument; and the vector entry point's alignment test, which
//! reads the pointers and the loop's first index back from those words.

use super::*;

/// A `#[repr(C)]` struct passed by value: 16 bytes, 8-aligned.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Pair {
    x: f32,
    n: i64,
}

// SAFETY: `#[repr(C)]` plain data.
unsafe impl DeviceCopy for Pair {}

fn gathered(push: impl FnOnce(&mut Gathered)) -> Gathered {
    let mut gathered = Gathered::default();
    push(&mut gathered);
    gathered
}

#[test]
fn each_argument_starts_a_word_and_keeps_its_exact_size() {
    let mut args = gathered(|g| {
        g.push(&7u8);
        g.push(&2.5f64);
        g.push(&[1u32, 2, 3]);
        g.push(&u64::MAX);
        g.push(&true);
        g.push(&-2i16);
        g.push(&Pair { x: 1.5, n: -9 });
    });
    // (first word, bytes): a pointer at a word is 8-aligned, enough for any parameter; a value of more than
    // 8 bytes takes the words it needs
    assert_eq!(args.places, [(0, 1), (1, 8), (2, 12), (4, 8), (5, 1), (6, 2), (7, 16)]);
    assert_eq!(args.words.len(), 9);
    // the bytes past a value are zero: the low bytes of a word are its value, as `vector_fits` reads it
    assert_eq!(args.words[0], 7);
    assert_eq!(args.words[5], 1);
    assert_eq!(args.words[6], 0xfffe);
    let parameters = args.parameters();
    assert_eq!(parameters.len(), 7);
    // SAFETY: each pointer points at the value pushed in its place, at its type's size and alignment
    unsafe {
        assert_eq!(*parameters[0].cast::<u8>(), 7);
        assert_eq!(*parameters[1].cast::<f64>(), 2.5);
        assert_eq!(*parameters[2].cast::<[u32; 3]>(), [1, 2, 3]);
        assert_eq!(*parameters[3].cast::<u64>(), u64::MAX);
        assert!(*parameters[4].cast::<bool>());
        assert_eq!(*parameters[5].cast::<i16>(), -2);
        assert_eq!(*parameters[6].cast::<Pair>(), Pair { x: 1.5, n: -9 });
    }
    assert!(parameters.iter().all(|&p| (p as usize).is_multiple_of(8)));
}

#[test]
fn the_pointers_follow_the_words_where_they_move() {
    let mut args = gathered(|g| g.push(&1u64));
    assert_eq!(args.parameters().len(), 1);
    for value in 2..=100u64 {
        args.push(&value); // the words grow, and move
    }
    let parameters = args.parameters();
    assert_eq!(parameters.len(), 100);
    for (value, &pointer) in (1..=100u64).zip(parameters.iter()) {
        // SAFETY: each pointer points at the u64 pushed in its place
        assert_eq!(unsafe { *pointer.cast::<u64>() }, value);
    }
}

/// Two f64 slices read at `i` and `i + 1` by a vector entry point of two lanes (16 bytes a group).
const PAIRS: Lanes = Lanes { width: 2, pointers: &[0, 1], offsets: &[0, 1], start: 2 };

fn launch<I: DeviceCopy>(a: u64, b: u64, start: I) -> Gathered {
    gathered(|g| {
        g.push(&a);
        g.push(&b);
        g.push(&start);
    })
}

#[test]
fn a_vector_launch_runs_where_every_slices_first_group_is_16_byte_aligned() {
    // a[0] at 0x1000, b[1] at 0x2008 + 8
    assert!(launch(0x1000, 0x2008, 0usize).vector_fits(&PAIRS));
    // from i = 1: a[1] at 0x1008
    assert!(!launch(0x1000, 0x2008, 1usize).vector_fits(&PAIRS));
    // from i = 2: both aligned again
    assert!(launch(0x1000, 0x2008, 2usize).vector_fits(&PAIRS));
    assert!(!launch(0x1000, 0x2000, 0usize).vector_fits(&PAIRS));
}

#[test]
fn a_negative_first_index_is_aligned_as_its_address_is() {
    // a[i - 1] from i = 0 reads below the pointer: 0x1008 - 8 is aligned, modulo 16 the arithmetic may wrap
    let behind = Lanes { offsets: &[-1, 1], ..PAIRS };
    assert!(launch(0x1008, 0x2008, 0usize).vector_fits(&behind));
    // an i32 loop from -1 fills only the low 4 bytes of its word; those decide the address modulo 16:
    // a[-1] at 0x1000 - 8, b[0] at 0x2008
    assert!(launch(0x1008, 0x2008, 0i32).vector_fits(&behind));
    assert!(!launch(0x1000, 0x2008, -1i32).vector_fits(&PAIRS));
    assert!(launch(0x1008, 0x2000, -1i32).vector_fits(&PAIRS));
}
