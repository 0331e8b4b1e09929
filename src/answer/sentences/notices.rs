//! The server's notices to a client that asked for them (`logging/setLevel`).

pub fn notice_offer_changed() -> &'static str {
    "What this key is offered has changed; list the tools and resources again."
}

pub fn notice_key_refused() -> &'static str {
    "The stack refused this key; it is not sent again. A new key is needed."
}

pub fn notice_unreachable() -> &'static str {
    "The stack could not be reached; the next call tries again."
}
