//! What an offer was made on, as far as the server can see it: the rehearsal's report without the
//! offer. The stack makes a new offer at every rehearsal (the demo a random one), so two offers
//! never tell whether the plan is the same; two reports do. The server keeps only a digest of the
//! report in the sealed offer, so the offer stays short and holds none of the stack's text.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::stack::{Body, Reply};

/// The SHA-256, as hex, of a rehearsal's report: its kind and data, less the `offer` in the data.
/// The envelope's other fields (the API version, a job's name) say nothing of the plan. The
/// reports of the rehearsed actions carry no clock time, so the same plan digests the same; JSON
/// objects are written with their keys in order, so the stack's order of fields does not count.
pub fn digest(reply: &Reply) -> String {
    let plan = match &reply.body {
        Body::Envelope(envelope) => {
            let envelope = envelope.value();
            let mut data = envelope.get("data").cloned().unwrap_or(Value::Null);
            if let Some(fields) = data.as_object_mut() {
                fields.remove("offer");
            }
            json!({ "kind": envelope.get("kind"), "data": data })
        }
        // A rehearsal answers an envelope; anything else is a plan only as its status says.
        Body::Lines(_) | Body::File(_) => json!({ "status": reply.status }),
    };
    hex::encode(Sha256::digest(plan.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cut::LeftOut;

    fn report(data: Value) -> Reply {
        Reply {
            status: 200,
            body: Body::Envelope(
                json!({"api_version": 1, "kind": "lifecycle", "data": data}).into(),
            ),
            left_out: LeftOut::default(),
        }
    }

    #[test]
    fn the_same_plan_with_another_offer_digests_the_same_and_a_moved_one_does_not() {
        let first = report(json!({"plan": {"services": ["jellyfin"]}, "offer": "lfo-1"}));
        let again = report(json!({"offer": "lfo-2", "plan": {"services": ["jellyfin"]}}));
        let moved = report(json!({"plan": {"services": ["jellyfin", "sonarr"]}, "offer": "lfo-1"}));
        assert_eq!(digest(&first), digest(&again));
        assert_ne!(digest(&first), digest(&moved));
    }
}
