//! Taking a lock whose last holder panicked: the values kept under these locks are whole after
//! every statement, so what a panicking holder left is still sound to use, and the server keeps
//! answering rather than failing every later call.

use std::sync::{Mutex, MutexGuard};

pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}
