//! Words the generator and the running server share, defined once: loaded by path into both, so
//! what the build writes (`Shape::Text`, `Audience::Household`) names these very types.

/// What calling a tool does: one variant for each kind of tool, which the compiler then asks the
/// generator and the server alike to handle. The running server names a read and an action by
/// the generated `Read` and `Action`; the generator, which writes those, by their variants' names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation<R, A> {
    Read(R),
    /// Says what an action would do, writing nothing, and hands out the offer its act takes.
    Rehearse(A),
    Act(A),
    /// Asks after a job an action started: offered whenever an action is.
    Job,
    /// The server's own: where it stands with the stack, offered before the stack answers.
    Connection,
}

/// What a tool's parameter takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Text,
    TextList,
    Flag,
    /// A whole number, 0 or more.
    Count,
}

/// Whose words a tool is described in: the operator's, or a household member's (F13-R3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    Operator,
    Household,
}

/// What a read that answers no envelope streams, as the contract gives it. It alone decides how
/// the answer is read and what its `outputSchema` is, never the `Content-Type` the stack names:
/// the structured content handed over is then always of the form the schema publishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Streamed {
    /// NDJSON log lines.
    Lines,
    File,
    Image,
}

/// What the stack can complete a value from, read under the asking key's own scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completing {
    /// The titles in the household's library.
    Titles,
    /// The stack's services.
    Services,
    /// The forms of media.
    Forms,
}
