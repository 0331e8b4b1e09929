//! What every request through the SDK passes on its way out and its answer on the way in: the
//! path is checked against the operation's template before anything is sent, the key goes in its
//! header, and the answer is read within its limits.

use progenitor_client::{ClientHooks, ClientInfo, Error, OperationInfo};

use super::bounded::{self, AnswerLimits};
use super::credential::{Key, TOKEN_HEADER};
use super::path;
use super::sdk::{self, Client};

/// What the SDK carries with it: the key its requests are sent with (none for a key link's
/// claim, which is sent before there is a key) and the limits of what it reads. Its `Debug` shows
/// neither the key nor anything of it.
#[derive(Clone, Debug)]
pub struct Door {
    key: Option<Key>,
    pub limits: AnswerLimits,
}

/// Why the door sent nothing: the request's path was not its operation's.
pub const PATH_OUTSIDE_TEMPLATE: &str = "the request's path is not its operation's template";

impl Door {
    pub fn new(key: Option<Key>, limits: AnswerLimits) -> Door {
        Door { key, limits }
    }
}

impl ClientHooks<Door> for Client {
    async fn pre<E>(
        &self,
        request: &mut reqwest::Request,
        info: &OperationInfo,
    ) -> Result<(), Error<E>> {
        let fits = sdk::template_of(info.operation_id)
            .is_some_and(|template| path::fits_template(request.url().path(), template));
        if !fits {
            return Err(Error::Custom(PATH_OUTSIDE_TEMPLATE.to_owned()));
        }
        // A parsed key is ASCII hex, so this cannot fail; if it did, the request would go
        // without a key and the stack would refuse it, which is safe.
        let key = self.inner().key.as_ref().map(Key::expose);
        if let Some(Ok(mut value)) = key.map(reqwest::header::HeaderValue::from_str) {
            value.set_sensitive(true);
            request.headers_mut().insert(TOKEN_HEADER, value);
        }
        Ok(())
    }

    async fn exec(
        &self,
        request: reqwest::Request,
        info: &OperationInfo,
    ) -> reqwest::Result<reqwest::Response> {
        let response = self.client().execute(request).await?;
        let streamed = sdk::answers_a_stream(info.operation_id);
        Ok(bounded::bounded(response, self.inner().limits, streamed).await)
    }
}
