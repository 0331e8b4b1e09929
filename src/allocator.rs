//! The program's memory allocator: on Linux, mimalloc for small blocks and the system's for
//! large ones.
//!
//! A read makes hundreds of small allocations, and mimalloc serves them in a fifth fewer
//! instructions than glibc's malloc (and far fewer than musl's, which the released binaries
//! link). But every open session keeps a few large blocks (the first room of the MCP library's
//! channels, kilobytes each) of which it writes only the start; the system's allocator leaves the
//! rest untouched and so not resident, where mimalloc's size classes and free lists hold more of
//! it. Splitting by size keeps both: small blocks fast, and a session as small as it was. With
//! musl, large blocks a read frees are kept for the next read (`allocator/shelves.rs`), since
//! musl gives their pages back to the system at once. docs/performance.md has the figures.
//!
//! Elsewhere the system's allocator serves everything, as it was measured there.

mod shelves;

use std::alloc::{GlobalAlloc, Layout, System};

use shelves::{LARGEST, Shelves};

/// Blocks of this many bytes or more go to the system's allocator.
const LARGE: usize = 4096;

/// The alignment the system's allocator gives every block; a block kept on the shelves needs no
/// more, so that it is made and freed by plain `malloc` and `free`.
const SYSTEM_ALIGN: usize = 16;

/// The allocator `main.rs` declares the program's own.
pub struct Allocator;

#[cfg(target_os = "linux")]
const SMALL: mimalloc::MiMalloc = mimalloc::MiMalloc;
#[cfg(not(target_os = "linux"))]
const SMALL: System = System;

static SHELVES: Shelves = Shelves::new();

/// The program's split, with shelves where the system's allocator is musl's.
const PROGRAM: Split<'static> = Split {
    shelves: if cfg!(target_env = "musl") {
        Some(&SHELVES)
    } else {
        None
    },
};

/// Blocks by size: small ones to mimalloc, large ones to the system's allocator, and, given
/// shelves, large ones kept when freed.
struct Split<'a> {
    shelves: Option<&'a Shelves>,
}

impl Split<'_> {
    /// The shelves a block of this layout is kept on when freed, if any.
    fn shelves_for(&self, layout: Layout) -> Option<&Shelves> {
        self.shelves
            .filter(|_| layout.size() <= LARGEST && layout.align() <= SYSTEM_ALIGN)
    }

    /// A kept block of exactly this layout's size, if its shelves hold one.
    fn take_kept(&self, layout: Layout) -> Option<*mut u8> {
        self.shelves_for(layout)?.take(layout.size())
    }

    /// SAFETY: as [`GlobalAlloc::alloc`].
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout is passed on; a kept block holds exactly its size.
        unsafe {
            if layout.size() < LARGE {
                return SMALL.alloc(layout);
            }
            match self.take_kept(layout) {
                Some(block) => block,
                None => System.alloc(layout),
            }
        }
    }

    /// SAFETY: as [`GlobalAlloc::alloc_zeroed`].
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout is passed on; a kept block holds exactly its size.
        unsafe {
            if layout.size() < LARGE {
                return SMALL.alloc_zeroed(layout);
            }
            match self.take_kept(layout) {
                Some(block) => {
                    block.write_bytes(0, layout.size());
                    block
                }
                None => System.alloc_zeroed(layout),
            }
        }
    }

    /// SAFETY: as [`GlobalAlloc::dealloc`].
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was made with `layout`'s size, so by the allocator that size gives; a
        // block the shelves give back was made by `malloc` (its alignment is the system's), so
        // `free` takes it whatever the layout says of its size.
        unsafe {
            if layout.size() < LARGE {
                return SMALL.dealloc(ptr, layout);
            }
            match self.shelves_for(layout) {
                Some(shelves) => {
                    for (block, size) in shelves.keep(ptr, layout.size()).blocks() {
                        System.dealloc(block, Layout::from_size_align_unchecked(size, 1));
                    }
                }
                None => System.dealloc(ptr, layout),
            }
        }
    }

    /// SAFETY: as [`GlobalAlloc::realloc`].
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` was made with `layout`'s size, so by the allocator that size gives; the
        // caller promises `new_size` is valid for `layout`'s alignment. A block resized by the
        // system's allocator holds at least its new size, all a kept block must.
        unsafe {
            match (layout.size() < LARGE, new_size < LARGE) {
                (true, true) => SMALL.realloc(ptr, layout, new_size),
                (false, false) => System.realloc(ptr, layout, new_size),
                _ => {
                    let moved = Layout::from_size_align_unchecked(new_size, layout.align());
                    let new = self.alloc(moved);
                    if !new.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    new
                }
            }
        }
    }
}

// SAFETY: every block is freed and resized by the allocator its size gives, since Rust hands back
// the size a block was made or last resized with (`Split::realloc` moves a block across the
// bound by copying); a kept block is handed out again only once freed, and only for its size.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's promises are passed on.
        unsafe { PROGRAM.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's promises are passed on.
        unsafe { PROGRAM.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's promises are passed on.
        unsafe { PROGRAM.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's promises are passed on.
        unsafe { PROGRAM.realloc(ptr, layout, new_size) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    static TEST_SHELVES: Shelves = Shelves::new();

    /// The split as glibc's builds have it, and as musl's do, with shelves of the tests' own.
    const SPLITS: [Split<'static>; 2] = [
        Split { shelves: None },
        Split {
            shelves: Some(&TEST_SHELVES),
        },
    ];

    /// A block made by `split`, each byte set from its place in the block.
    fn filled(split: &Split, size: usize, align: usize) -> (*mut u8, Layout) {
        let layout = Layout::from_size_align(size, align).unwrap();
        let block = unsafe { split.alloc(layout) };
        assert!(!block.is_null());
        assert_eq!(block as usize % align, 0, "{size} bytes aligned to {align}");
        for at in 0..size {
            unsafe { block.add(at).write(pattern(at)) };
        }
        (block, layout)
    }

    fn pattern(at: usize) -> u8 {
        (at % 251) as u8
    }

    fn holds_pattern(block: *const u8, size: usize) -> bool {
        (0..size).all(|at| unsafe { block.add(at).read() } == pattern(at))
    }

    #[test]
    fn a_block_resized_across_the_bound_keeps_its_bytes_both_ways() {
        for split in &SPLITS {
            for (from, to) in [(100, LARGE + 100), (LARGE + 100, 100), (LARGE - 1, LARGE)] {
                let (block, layout) = filled(split, from, 8);
                let resized = unsafe { split.realloc(block, layout, to) };
                assert!(!resized.is_null());
                assert!(holds_pattern(resized, from.min(to)), "{from} → {to} bytes");
                unsafe { split.dealloc(resized, Layout::from_size_align(to, 8).unwrap()) };
            }
        }
    }

    #[test]
    fn zeroed_blocks_are_zero_on_both_sides_of_the_bound_even_when_kept_before() {
        for split in &SPLITS {
            for size in [1, 64, LARGE - 1, LARGE, 3 * LARGE, 3 * LARGE + 1, 100_000] {
                // A block of the size, written and freed first, so that a kept one is reused.
                let (written, layout) = filled(split, size, 16);
                unsafe { split.dealloc(written, layout) };
                let block = unsafe { split.alloc_zeroed(layout) };
                assert!(!block.is_null());
                assert!((0..size).all(|at| unsafe { block.add(at).read() } == 0));
                unsafe { split.dealloc(block, layout) };
            }
        }
    }

    #[test]
    fn a_large_alignment_is_kept_on_both_sides_of_the_bound() {
        for split in &SPLITS {
            for size in [8, LARGE + 8] {
                for align in [64, 4096, 65536] {
                    let (block, layout) = filled(split, size, align);
                    let to = if size < LARGE { LARGE + 8 } else { 8 };
                    let resized = unsafe { split.realloc(block, layout, to) };
                    assert_eq!(
                        resized as usize % align,
                        0,
                        "{size} → {to} aligned to {align}"
                    );
                    assert!(holds_pattern(resized, size.min(to)));
                    unsafe { split.dealloc(resized, Layout::from_size_align(to, align).unwrap()) };
                }
            }
        }
    }

    #[test]
    fn a_freed_large_block_serves_the_next_ask_of_its_size_only() {
        let shelves = Shelves::new();
        let musl = Split {
            shelves: Some(&shelves),
        };
        let layout = Layout::from_size_align(8640, 8).unwrap();
        let (block, _) = filled(&musl, 8640, 8);
        unsafe { musl.dealloc(block, layout) };
        let other = unsafe { musl.alloc(Layout::from_size_align(8641, 8).unwrap()) };
        assert_ne!(other, block, "a block serves only its own size");
        let again = unsafe { musl.alloc(layout) };
        assert_eq!(again, block, "the block kept serves its size");
        for (block, layout) in [
            (other, Layout::from_size_align(8641, 8).unwrap()),
            (again, layout),
        ] {
            unsafe { musl.dealloc(block, layout) };
        }
        // Too large, or aligned more than the system's allocator is by itself: never kept.
        for layout in [
            Layout::from_size_align(LARGEST + 1, 8).unwrap(),
            Layout::from_size_align(8640, 64).unwrap(),
        ] {
            assert!(musl.shelves_for(layout).is_none());
        }
    }

    proptest! {
        /// However a block grows and shrinks, across the bound or not, kept or not, it keeps what
        /// it held, and is freed in the home that holds it last (a wrong one aborts the run).
        #[test]
        fn a_block_keeps_its_bytes_through_any_resizes(
            kept in any::<bool>(),
            sizes in proptest::collection::vec(1usize..24 * LARGE, 1..12),
            align in prop_oneof![Just(1usize), Just(8), Just(32), Just(4096)],
        ) {
            let split = &SPLITS[usize::from(kept)];
            let (mut block, mut layout) = filled(split, sizes[0], align);
            for &size in &sizes[1..] {
                let kept = layout.size().min(size);
                block = unsafe { split.realloc(block, layout, size) };
                prop_assert!(!block.is_null());
                prop_assert!(holds_pattern(block, kept));
                layout = Layout::from_size_align(size, align).unwrap();
                for at in kept..size {
                    unsafe { block.add(at).write(pattern(at)) };
                }
            }
            unsafe { split.dealloc(block, layout) };
        }
    }
}
