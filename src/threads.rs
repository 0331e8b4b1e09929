//! The threads each command runs its work on, and the one setting that changes how many
//! (`TOKIO_WORKER_THREADS`). The setting is read here, so a value that is not a number of threads
//! is refused by name; the runtime library would panic on it.

use tokio::runtime::Builder;

/// Over stdio one client sends one message at a time: one thread answers it without handing it
/// between threads (docs/performance.md). The setting does not apply.
pub fn for_stdio() -> Builder {
    Builder::new_current_thread()
}

/// The HTTP mode: a thread for every two cores, at least one. The stack it fronts usually shares
/// the machine, and on two cores one thread answered more calls a second, at less CPU a call,
/// than two handing each request between them. One thread is tokio's current-thread runtime,
/// which runs the work on the thread that waits for the network: a multi-thread runtime of one
/// worker took half as much CPU again a call at 16 clients (docs/performance.md).
pub fn for_http() -> Result<Builder, BadThreads> {
    let threads = asked()?.unwrap_or((cores() / 2).max(1));
    Ok(if threads == 1 {
        Builder::new_current_thread()
    } else {
        multi_thread(threads)
    })
}

/// Every other command: a thread for each core.
pub fn for_the_rest() -> Result<Builder, BadThreads> {
    Ok(multi_thread(asked()?.unwrap_or_else(cores)))
}

fn multi_thread(threads: usize) -> Builder {
    let mut runtime = Builder::new_multi_thread();
    runtime.worker_threads(threads);
    runtime
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// The number `TOKIO_WORKER_THREADS` gives, if it is set.
fn asked() -> Result<Option<usize>, BadThreads> {
    match std::env::var("TOKIO_WORKER_THREADS") {
        Ok(asked) => match asked.trim().parse::<usize>() {
            Ok(threads) if threads > 0 => Ok(Some(threads)),
            _ => Err(BadThreads(asked)),
        },
        Err(std::env::VarError::NotUnicode(asked)) => {
            Err(BadThreads(asked.to_string_lossy().into_owned()))
        }
        Err(std::env::VarError::NotPresent) => Ok(None),
    }
}

/// `TOKIO_WORKER_THREADS` set to something other than a number of threads.
#[derive(Debug, thiserror::Error)]
#[error(
    "TOKIO_WORKER_THREADS is {0:?}, which is not a number of threads: give a whole number, 1 or \
     more, or leave it unset for the default"
)]
pub struct BadThreads(String);
