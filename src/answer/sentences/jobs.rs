//! Where an act's job stands, while it is followed and once it is asked after.

/// A progress note while an act's job is followed: the server's words only, never the stack's.
pub fn job_in_progress(act: &str, waited_seconds: u64) -> String {
    format!("The stack is still working on {act} ({waited_seconds} seconds so far).")
}

/// Where a job stands, said after an act tool followed it (`act`, how long) or when the job tool
/// asked (`None`).
pub fn job_running(after: Option<(&str, u64)>) -> String {
    match after {
        Some((act, waited_seconds)) => format!(
            "The stack is still working on {act} after {waited_seconds} seconds. Where it stands, with the job's \
             identifier, follows as data; ask again later with the job tool, and do not call {act} again meanwhile."
        ),
        None => {
            "The job is still running; where it stands follows as data. Ask again later.".to_owned()
        }
    }
}

pub fn job_finished(act: Option<&str>) -> String {
    let what = act.unwrap_or("the job");
    format!("The stack finished {what}; its output follows as data, between the boundary lines.")
}

pub fn job_stopped(act: Option<&str>) -> String {
    let what = act.unwrap_or("the job");
    format!(
        "The stack started {what}, but it stopped without finishing; why follows as data, between the boundary lines."
    )
}

pub fn job_not_followed(act: &str) -> String {
    format!(
        "The stack started {act} as a job, but could not be asked how it went. The job's identifier follows as \
         data; ask again later with the job tool, and do not call {act} again meanwhile."
    )
}

pub fn job_unknown() -> &'static str {
    "The stack knows no such job; the job's identifier may be mistyped, or the stack has forgotten a job that \
     ended long ago. What it said follows as data, between the boundary lines."
}
