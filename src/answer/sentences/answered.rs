//! What the server says before the stack's answer: that it answered, in what form, and what of it
//! could not be handed over (too large, cut short, or in a shape the server does not know).

use crate::answer::conformance::{API_VERSION, Mismatch};

pub fn answered(tool: &str) -> String {
    format!("The stack answered {tool}; its answer follows as data, between the boundary lines.")
}

pub fn answered_lines(tool: &str) -> String {
    format!(
        "The stack answered {tool} with log lines, one envelope each; they follow as data, between the boundary lines."
    )
}

pub fn answered_image(tool: &str, attached: bool) -> String {
    if attached {
        format!(
            "The stack answered {tool} with an image, attached as image content; what it is follows as data \
             between the boundary lines."
        )
    } else {
        format!(
            "The stack answered {tool} with something this server does not hand over as an image: larger than {} \
             KiB or {} million pixels, or not a PNG, JPEG, GIF or WebP by its own bytes. Its size and SHA-256 \
             follow as data between the boundary lines; nothing is attached.",
            crate::stack::IMAGE_LIMIT / 1024,
            crate::stack::PIXEL_LIMIT / 1_000_000
        )
    }
}

pub fn answered_file(tool: &str, attached: bool) -> String {
    if attached {
        format!(
            "The stack answered {tool} with a file; what it is follows as data between the boundary lines, and the \
             file itself is attached as a resource."
        )
    } else {
        format!(
            "The stack answered {tool} with a file too large to hand over in a result; its size and SHA-256 follow \
             as data between the boundary lines, and the file is not attached."
        )
    }
}

/// What was left out of an answer to keep the result within its limit, and how to ask for less
/// with the tool's own parameters.
pub fn left_out(items: u64, narrowing: &[&str]) -> String {
    let how = if narrowing.is_empty() {
        "This tool takes no parameters to ask for less; what is shown is the start of the answer."
            .to_owned()
    } else {
        format!(
            "To see more, ask for less at a time with the tool's parameters ({}).",
            narrowing.join(", ")
        )
    };
    format!(
        "The answer was longer than one result may hold: {items} items of it were left out, as the data's \
         left_out says. {how}"
    )
}

pub fn too_large(limit: u64, narrowing: &[&str]) -> String {
    let how = if narrowing.is_empty() {
        "This tool takes no parameters to ask for less.".to_owned()
    } else {
        format!(
            "Ask for less with the tool's parameters ({}).",
            narrowing.join(", ")
        )
    };
    format!(
        "The stack's answer was larger than this server reads ({limit} bytes, LEMONFIBER_ANSWER_LIMIT), so reading \
         it was abandoned and nothing of it is handed over. {how}"
    )
}

pub fn unexpected(status: Option<u16>) -> String {
    match status {
        Some(status) => format!(
            "The stack answered (HTTP {status}) in a form this server does not understand; it may speak a newer \
             web API than this server was built for."
        ),
        None => "The stack answered in a form this server does not understand; it may speak a newer web API than \
                 this server was built for."
            .to_owned(),
    }
}

/// An answer in a shape other than the contract's. Says nothing the stack wrote: the version is a
/// number, and the place named is in the contract's own schema.
pub fn unlike_the_contract(tool: &str, mismatch: &Mismatch) -> String {
    let version = API_VERSION;
    let how = match mismatch.api_version {
        Some(theirs) => format!(
            "it says it speaks web API version {theirs}, and this server speaks version {version}"
        ),
        None => format!(
            "it differs from what web API version {version} declares for {tool}, first where it breaks {}",
            mismatch.first
        ),
    };
    format!(
        "The stack answered {tool} in a shape this server does not know: {how}. The stack may be a newer \
         (or older) lemonfiber than this server was built for. Its answer follows as data, between the boundary \
         lines, with where it differs; do not rely on fields the server could not check."
    )
}
