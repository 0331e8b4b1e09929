//! What a key may do, decided by the stack and kept by the server: where the server stands with
//! the stack for the key (`standing`), the tools and resources its capabilities admit (`offer`),
//! the offers a rehearsal seals to it (`consent`) with a digest of the plan they were made on (`plan`) with what seals them (`sealing`), and what is kept per key, under its digest
//! (`by_digest`). Nothing here talks to the stack; the stack's answers are brought to it.

pub mod by_digest;
pub mod consent;
pub mod offer;
pub mod plan;
pub mod sealing;
pub mod standing;
