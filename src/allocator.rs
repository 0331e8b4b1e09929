//! The program's memory allocator: on Linux, mimalloc for small blocks and the system's for
//! large ones.
//!
//! A read makes hundreds of small allocations, and mimalloc serves them in a fifth fewer
//! instructions than glibc's malloc (and far fewer than musl's, which the released binaries
//! link). But every open session keeps a few large blocks (the first room of the MCP library's
//! channels, kilobytes each) of which it writes only the start; the system's allocator leaves the
//! rest untouched and so not resident, where mimalloc's size classes and free lists hold more of
//! it. Splitting by size keeps both: small blocks fast, and a session as small as it was.
//! docs/performance.md has the figures.
//!
//! Elsewhere the system's allocator serves everything, as it was measured there.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks of this many bytes or more go to the system's allocator.
const LARGE: usize = 4096;

/// The allocator `main.rs` declares the program's own.
pub struct Allocator;

#[cfg(target_os = "linux")]
const SMALL: mimalloc::MiMalloc = mimalloc::MiMalloc;
#[cfg(not(target_os = "linux"))]
const SMALL: System = System;

fn is_large(size: usize) -> bool {
    size >= LARGE
}

// SAFETY: every block is freed and resized by the allocator that made it, since a block's size
// decides its allocator and Rust hands back the size a block was made or last resized with; a
// resize across the bound moves the block to the other allocator by copying.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout is passed on unchanged.
        unsafe {
            if is_large(layout.size()) {
                System.alloc(layout)
            } else {
                SMALL.alloc(layout)
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout is passed on unchanged.
        unsafe {
            if is_large(layout.size()) {
                System.alloc_zeroed(layout)
            } else {
                SMALL.alloc_zeroed(layout)
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was made with `layout`'s size, so by the allocator chosen here.
        unsafe {
            if is_large(layout.size()) {
                System.dealloc(ptr, layout)
            } else {
                SMALL.dealloc(ptr, layout)
            }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let was_large = is_large(layout.size());
        // SAFETY: `ptr` was made with `layout`'s size, so by the allocator chosen by it; the
        // caller promises `new_size` is valid for `layout`'s alignment.
        unsafe {
            match (was_large, is_large(new_size)) {
                (true, true) => System.realloc(ptr, layout, new_size),
                (false, false) => SMALL.realloc(ptr, layout, new_size),
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A block made by the program's allocator, each byte set from its place in the block.
    fn filled(size: usize, align: usize) -> (*mut u8, Layout) {
        let layout = Layout::from_size_align(size, align).unwrap();
        let block = unsafe { Allocator.alloc(layout) };
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
        for (from, to) in [(100, LARGE + 100), (LARGE + 100, 100), (LARGE - 1, LARGE)] {
            let (block, layout) = filled(from, 8);
            let resized = unsafe { Allocator.realloc(block, layout, to) };
            assert!(!resized.is_null());
            assert!(holds_pattern(resized, from.min(to)), "{from} → {to} bytes");
            unsafe { Allocator.dealloc(resized, Layout::from_size_align(to, 8).unwrap()) };
        }
    }

    #[test]
    fn zeroed_blocks_are_zero_on_both_sides_of_the_bound() {
        for size in [1, 64, LARGE - 1, LARGE, 3 * LARGE] {
            let layout = Layout::from_size_align(size, 16).unwrap();
            let block = unsafe { Allocator.alloc_zeroed(layout) };
            assert!(!block.is_null());
            assert!((0..size).all(|at| unsafe { block.add(at).read() } == 0));
            unsafe { Allocator.dealloc(block, layout) };
        }
    }

    #[test]
    fn a_large_alignment_is_kept_on_both_sides_of_the_bound() {
        for size in [8, LARGE + 8] {
            for align in [64, 4096, 65536] {
                let (block, layout) = filled(size, align);
                let to = if is_large(size) { 8 } else { LARGE + 8 };
                let resized = unsafe { Allocator.realloc(block, layout, to) };
                assert_eq!(
                    resized as usize % align,
                    0,
                    "{size} → {to} aligned to {align}"
                );
                assert!(holds_pattern(resized, size.min(to)));
                unsafe { Allocator.dealloc(resized, Layout::from_size_align(to, align).unwrap()) };
            }
        }
    }

    proptest! {
        /// However a block grows and shrinks, across the bound or not, it keeps what it held,
        /// and is freed by the allocator that holds it last (a wrong one aborts the run).
        #[test]
        fn a_block_keeps_its_bytes_through_any_resizes(
            sizes in proptest::collection::vec(1usize..3 * LARGE, 1..12),
            align in prop_oneof![Just(1usize), Just(8), Just(32), Just(4096)],
        ) {
            let (mut block, mut layout) = filled(sizes[0], align);
            for &size in &sizes[1..] {
                let kept = layout.size().min(size);
                block = unsafe { Allocator.realloc(block, layout, size) };
                prop_assert!(!block.is_null());
                prop_assert!(holds_pattern(block, kept));
                layout = Layout::from_size_align(size, align).unwrap();
                for at in kept..size {
                    unsafe { block.add(at).write(pattern(at)) };
                }
            }
            unsafe { Allocator.dealloc(block, layout) };
        }
    }
}
