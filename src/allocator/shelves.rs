//! Large blocks kept when freed, for the next ask of the same size: used with musl's allocator.
//!
//! musl serves a block of a few kilobytes from a small group of pages it maps for that size, and
//! unmaps the group as soon as its blocks are free again. A read frees every such block it made,
//! so on the released static binaries each read mapped and unmapped memory about twice and
//! faulted its pages in afresh (docs/performance.md, "The static binary"). Kept here instead, a
//! block freed by one read serves the next read's ask of the same size (a read asks for the same
//! few sizes each time) without a system call.
//!
//! A block is kept at the size it was asked for, never rounded: rounding moves a block into a
//! larger class of musl's, which writes at the block's end and so makes a session's long-lived
//! blocks resident further than the session writes them. What is kept is bounded by [`BYTES`]
//! and [`BLOCKS`]; the oldest kept block makes room for a newer one.

use std::sync::Mutex;

/// Blocks over this size are never kept: they are rare, and musl maps each of them alone.
pub const LARGEST: usize = 64 * 1024;

/// Blocks kept at once, at most: several reads' large blocks.
const BLOCKS: usize = 32;

/// Bytes kept at once, at most.
const BYTES: usize = 256 * 1024;

/// The kept blocks, behind one lock: a block is taken or kept a few times a read, far less often
/// than the lock could be contended.
pub struct Shelves(Mutex<Kept>);

struct Kept {
    blocks: [Block; BLOCKS],
    held: usize,
    bytes: usize,
}

#[derive(Clone, Copy)]
struct Block {
    at: *mut u8,
    size: usize,
}

// SAFETY: a kept block is plain memory that no one else holds a pointer to; any thread may take
// it.
unsafe impl Send for Kept {}

impl Shelves {
    pub const fn new() -> Self {
        const NONE: Block = Block {
            at: std::ptr::null_mut(),
            size: 0,
        };
        Shelves(Mutex::new(Kept {
            blocks: [NONE; BLOCKS],
            held: 0,
            bytes: 0,
        }))
    }

    /// A kept block of exactly `size` bytes, if one is kept; the one kept last, as its memory is
    /// the likeliest still cached.
    pub fn take(&self, size: usize) -> Option<*mut u8> {
        let mut kept = self.0.lock().ok()?;
        let held = kept.held;
        let found = kept.blocks[..held]
            .iter()
            .rposition(|block| block.size == size)?;
        let block = kept.remove(found);
        Some(block.at)
    }

    /// Keeps `block`, of `size` bytes (at most [`LARGEST`]), making room by giving up the oldest
    /// kept block. Returns what the caller must now free with the system's allocator: the block
    /// given up, and `block` itself when there is still no room for it.
    pub fn keep(&self, block: *mut u8, size: usize) -> Given {
        let mut given = Given::default();
        let Ok(mut kept) = self.0.lock() else {
            given.offered = Some((block, size));
            return given;
        };
        if kept.held > 0 && (kept.held == BLOCKS || kept.bytes + size > BYTES) {
            let oldest = kept.remove(0);
            given.oldest = Some((oldest.at, oldest.size));
        }
        if kept.bytes + size > BYTES {
            given.offered = Some((block, size));
            return given;
        }
        let held = kept.held;
        kept.blocks[held] = Block { at: block, size };
        kept.held += 1;
        kept.bytes += size;
        given
    }
}

impl Kept {
    /// Takes the block at `index` off the shelves, keeping the rest in the order they were kept.
    fn remove(&mut self, index: usize) -> Block {
        let block = self.blocks[index];
        self.blocks.copy_within(index + 1..self.held, index);
        self.held -= 1;
        self.bytes -= block.size;
        block
    }
}

/// Blocks the shelves gave back, for the caller to free outside their lock: the oldest kept
/// block, and the block offered when it could not be kept.
#[derive(Default)]
pub struct Given {
    oldest: Option<(*mut u8, usize)>,
    offered: Option<(*mut u8, usize)>,
}

impl Given {
    /// Each block given back, with its size.
    pub fn blocks(&self) -> impl Iterator<Item = (*mut u8, usize)> {
        self.oldest.into_iter().chain(self.offered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distinct addresses to keep (never read or written: the shelves only hold them).
    fn blocks(count: usize) -> Vec<*mut u8> {
        (1..=count).map(|at| (at * 4096) as *mut u8).collect()
    }

    fn given(shelves: &Shelves, block: *mut u8, size: usize) -> Vec<(*mut u8, usize)> {
        shelves.keep(block, size).blocks().collect()
    }

    #[test]
    fn a_kept_block_serves_only_its_own_size_the_last_kept_first_and_once() {
        let shelves = Shelves::new();
        let all = blocks(3);
        let (a, b, c) = (all[0], all[1], all[2]);
        assert!(given(&shelves, a, 8192).is_empty());
        assert!(given(&shelves, b, 4512).is_empty());
        assert!(given(&shelves, c, 8192).is_empty());
        assert_eq!(shelves.take(8193), None);
        assert_eq!(shelves.take(8192), Some(c));
        assert_eq!(shelves.take(8192), Some(a));
        assert_eq!(shelves.take(8192), None);
        assert_eq!(shelves.take(4512), Some(b));
    }

    #[test]
    fn the_oldest_block_makes_room_when_the_shelves_are_full_by_count() {
        let shelves = Shelves::new();
        let all = blocks(BLOCKS + 1);
        for (at, &block) in all[..BLOCKS].iter().enumerate() {
            assert!(given(&shelves, block, 4096 + at).is_empty());
        }
        assert_eq!(given(&shelves, all[BLOCKS], 5000), [(all[0], 4096)]);
        assert_eq!(shelves.take(4096), None, "the oldest was given back");
        assert_eq!(shelves.take(5000), Some(all[BLOCKS]));
    }

    #[test]
    fn the_oldest_block_makes_room_when_the_shelves_are_full_by_bytes() {
        let shelves = Shelves::new();
        let all = blocks(BYTES / LARGEST + 1);
        for &block in &all[..BYTES / LARGEST] {
            assert!(given(&shelves, block, LARGEST).is_empty());
        }
        assert_eq!(
            given(&shelves, all[BYTES / LARGEST], 4096),
            [(all[0], LARGEST)]
        );
        assert_eq!(shelves.take(4096), Some(all[BYTES / LARGEST]));
    }
}
