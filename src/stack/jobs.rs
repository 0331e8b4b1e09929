//! Following a job an action started: asked after for a bounded time, then said where it stands.

use std::time::{Duration, Instant};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{Body, Failure, Refusal, Reply, Stack};
use crate::backoff::Backoff;

const FIRST_LOOK: Duration = Duration::from_millis(200);
const LONGEST_WAIT_BETWEEN_LOOKS: Duration = Duration::from_secs(2);

/// Where a job stands, with the stack's answer about it (untrusted data).
#[derive(Debug, Clone, PartialEq)]
pub enum JobState {
    Running(Value),
    Finished(Value),
    Stopped(Refusal),
    Unknown(Refusal),
}

/// The job an action's answer started, if it answered `202` with `kind: "job"`.
pub fn started(reply: &Reply) -> Option<String> {
    let Body::Envelope(envelope) = &reply.body else {
        return None;
    };
    let envelope = envelope.value();
    if reply.status != 202 || envelope.get("kind")?.as_str()? != "job" {
        return None;
    }
    envelope.pointer("/data/job")?.as_str().map(str::to_owned)
}

/// Where the job stands, and the status the stack answered with.
pub async fn ask(stack: &Stack, job: &str) -> Result<(u16, JobState), Failure> {
    match stack.job(job).await {
        Ok(Reply {
            status: 202,
            body: Body::Envelope(envelope),
            ..
        }) => Ok((202, JobState::Running(envelope.into_value()))),
        Ok(Reply {
            status,
            body: Body::Envelope(envelope),
            ..
        }) => Ok((status, JobState::Finished(envelope.into_value()))),
        Ok(Reply { status, .. }) => Err(Failure::Unexpected {
            status: Some(status),
        }),
        Err(Failure::Refused(refusal)) if refusal.status == 404 => {
            Ok((404, JobState::Unknown(refusal)))
        }
        Err(Failure::Refused(refusal)) if refusal.status >= 500 => {
            Ok((refusal.status, JobState::Stopped(refusal)))
        }
        Err(failure) => Err(failure),
    }
}

/// Asks after the job until it is no longer running, `limit` has passed or `stop` is cancelled,
/// waiting longer between looks as it goes on; `still_running` hears how many looks found it
/// running. Only the following stops: the job is the stack's.
pub async fn follow<Told>(
    stack: &Stack,
    job: &str,
    limit: Duration,
    stop: &CancellationToken,
    mut still_running: impl FnMut(u32) -> Told,
) -> Result<JobState, Failure>
where
    Told: Future<Output = ()>,
{
    let started = Instant::now();
    let mut waits = Backoff::new(FIRST_LOOK, LONGEST_WAIT_BETWEEN_LOOKS);
    let mut looks = 0;
    loop {
        let (_, state) = ask(stack, job).await?;
        looks += 1;
        let left = limit.saturating_sub(started.elapsed());
        if !matches!(state, JobState::Running(_)) || left.is_zero() || stop.is_cancelled() {
            return Ok(state);
        }
        still_running(looks).await;
        tokio::select! {
            () = tokio::time::sleep(waits.next_wait().min(left)) => {}
            () = stop.cancelled() => return Ok(state),
        }
    }
}
