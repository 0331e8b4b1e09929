//! What both of the HTTP mode's doors answer with, the MCP endpoint (`serve::http`) and sign-in
//! (`sign_in`): a body read within a cap, and the refusals the server says itself, in one JSON
//! shape (`error`, `error_description`, as OAuth's).

pub mod body;
pub mod refusing;
