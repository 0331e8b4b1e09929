//! `/authorize`: the page a person signs in on. A `GET` names the client, where it sends the
//! person back, and the PKCE challenge; the page asks for an integration key or a key link, checks
//! the key with the stack (claiming the link first, once, over its pinned TLS), shows what the key
//! will let the assistant do, and asks to allow or deny. Only then is a code sent back.
//!
//! Each form carries a sealed token bound to the sign-in request and to this browser (a cookie
//! only this server's own pages send back), used once: a form posted from another site, or
//! replayed, is refused. Nothing is kept between the steps but what the tokens seal.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::clients::{self, ClientRefused};
use super::page::{self, Asking};
use super::params::Params;
use super::{Front, Here, Sent, SignIn, tokens};
use crate::access::sealing::{NotUsed, Purpose, now, random};
use crate::access::standing::Verdict;
use crate::link::{self, LinkFailure};
use crate::stack::credential::Key;

const FORM: Purpose = Purpose {
    prefix: "lfmcp-form1.",
    bound_to: b"lemonfiber-mcp sign-in form 1",
};
/// How long a person has for each step of the page.
const FORM_LIFE: u64 = 10 * 60;
/// The cookie that binds the page's forms to the browser it was shown in. `__Host-`: set by this
/// origin alone, over HTTPS, for the whole of it.
const BINDING_COOKIE: &str = "__Host-lfmcp-sign-in";

/// What a form seals: the sign-in request, this browser's binding, and (once checked) the key.
#[derive(Serialize, Deserialize)]
struct Form {
    /// The client id.
    c: String,
    /// The client's name, as it said it.
    n: Option<String>,
    /// Where its metadata document was fetched from, for a client whose id is one.
    d: Option<String>,
    /// The redirect URI.
    r: String,
    /// The client's `state`, handed back with the answer.
    s: Option<String>,
    /// The PKCE challenge.
    p: String,
    /// The resource the grant is for.
    a: String,
    /// The digest of this browser's binding cookie.
    b: String,
    /// The key, once the stack has taken it.
    k: Option<String>,
    /// The key a key link was traded for, before the stack could be asked about it: kept for
    /// this sign-in, since the link is spent.
    m: Option<String>,
    /// When it expires, in seconds since the epoch.
    x: u64,
}

impl Form {
    fn asking(&self) -> Asking<'_> {
        Asking {
            name: self.n.as_deref(),
            redirect: &self.r,
            document_host: self.d.as_deref(),
        }
    }
}

/// `GET /authorize`. A request at fault is refused on the page, never sent back: until the
/// person has seen the page, this server sends no browser anywhere a client named (RFC 9700
/// §4.11.2), since anyone can register a client.
pub async fn ask<F: Front>(
    State(front): State<Arc<F>>,
    here: Here,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let refused = |problem: &str| page::cannot_go_on(StatusCode::BAD_REQUEST, problem);
    let asked = match Params::of(uri.query().unwrap_or_default().as_bytes()) {
        Ok(asked) => asked,
        Err(not_read) => return refused(&not_read.description()),
    };
    let Some(client_id) = asked.get("client_id") else {
        return refused(page::NO_CLIENT);
    };
    // A client metadata document is fetched from wherever the request says: as dear as a new
    // key, so it counts against the same allowance.
    if clients::is_document_url(client_id) && !front.take_a_new_key_turn(here.peer) {
        return page::cannot_go_on(StatusCode::TOO_MANY_REQUESTS, page::TOO_MANY_SIGN_INS);
    }
    let client = match clients::client(front.sign_in(), client_id).await {
        Ok(client) => client,
        Err(ClientRefused::NotIssuedHere) => return refused(page::UNKNOWN_CLIENT),
        Err(ClientRefused::Document(why)) => return refused(&why.describe()),
    };
    let Some(redirect) = asked
        .get("redirect_uri")
        .filter(|redirect| client.redirect_uris.iter().any(|known| known == redirect))
    else {
        return refused(page::WRONG_REDIRECT);
    };
    if asked.get("response_type") != Some("code") {
        return refused(page::NOT_CODE);
    }
    let Some(challenge) = asked.get("code_challenge").filter(|challenge| {
        challenge.len() == 43
            && challenge
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_'))
    }) else {
        return refused(page::NO_PKCE);
    };
    if asked.get("code_challenge_method") != Some("S256") {
        return refused(page::NO_PKCE);
    }
    if asked
        .get("resource")
        .is_some_and(|resource| resource != here.resource())
    {
        return refused(page::OTHER_RESOURCE);
    }
    // A sign-in already under way in this browser keeps its binding, so a second tab or a
    // page opened again does not end it.
    let binding = match binding_of(&headers).filter(|binding| is_binding(binding)) {
        Some(binding) => binding.to_owned(),
        None => match random::<16>() {
            Ok(fresh) => base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(fresh),
            Err(_) => return page::cannot_go_on(StatusCode::SERVICE_UNAVAILABLE, page::NOT_MADE),
        },
    };
    let form = Form {
        c: client.id,
        n: client.name,
        d: client.document_host,
        r: redirect.to_owned(),
        s: asked.get("state").map(str::to_owned),
        p: challenge.to_owned(),
        a: here.resource(),
        b: digest(&binding),
        k: None,
        m: None,
        x: now() + FORM_LIFE,
    };
    let response = match front.sign_in().sealer.seal(&FORM, &form) {
        Some(sealed) => page::ask_for_key(&form.asking(), &sealed, None, false),
        None => page::cannot_go_on(StatusCode::SERVICE_UNAVAILABLE, page::NOT_MADE),
    };
    bound(response, &binding)
}

/// A page with this browser's binding set again, for as long as its form lasts.
fn bound(mut response: Response, binding: &str) -> Response {
    let cookie = format!(
        "{BINDING_COOKIE}={binding}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age={FORM_LIFE}"
    );
    if let Ok(cookie) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

/// Whether a cookie's value is a binding this server could have made.
fn is_binding(value: &str) -> bool {
    value.len() == 22
        && value
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_'))
}

/// `POST /authorize`: a key or key link given, or the person's allow or deny.
pub async fn answered<F: Front>(
    State(front): State<Arc<F>>,
    headers: HeaderMap,
    sent: Sent,
) -> Response {
    let here = sent.here;
    if is_cross_site(&headers, &here) {
        return page::cannot_go_on(StatusCode::FORBIDDEN, page::CROSS_SITE);
    }
    let asked = match sent.body.and_then(|bytes| Params::of(&bytes)) {
        Ok(asked) => asked,
        Err(not_read) => {
            return page::cannot_go_on(StatusCode::BAD_REQUEST, &not_read.description());
        }
    };
    let sign_in = front.sign_in();
    let binding = binding_of(&headers).unwrap_or_default();
    let Some((form, nonce)) = asked
        .get("form")
        .and_then(|sealed| sign_in.sealer.open::<Form>(&FORM, sealed))
        .filter(|(form, _)| form.x > now() && digest(binding) == form.b)
    else {
        return page::cannot_go_on(StatusCode::FORBIDDEN, page::FORM_NOT_OURS);
    };
    match sign_in.forms_used.use_once(&nonce, form.x) {
        Ok(()) => {}
        Err(NotUsed::Already) => {
            return page::cannot_go_on(StatusCode::FORBIDDEN, page::FORM_SPENT);
        }
        Err(NotUsed::NotRecorded) => {
            return page::cannot_go_on(StatusCode::SERVICE_UNAVAILABLE, page::NOT_MADE);
        }
    }
    match form.k.as_deref() {
        None => bound(
            checked(front.as_ref(), &here, form, asked.get("credential")).await,
            binding,
        ),
        Some(key) => decided(sign_in, &here, &form, key, asked.get("decision")),
    }
}

/// The first step's answer: the key (from the link, if one was given) checked with the stack,
/// and what it allows shown; or the page again, saying what went wrong.
async fn checked(
    front: &impl Front,
    here: &Here,
    mut form: Form,
    credential: Option<&str>,
) -> Response {
    let again = |form: Form, problem: &str| -> Response {
        let form = Form {
            x: now() + FORM_LIFE,
            ..form
        };
        match front.sign_in().sealer.seal(&FORM, &form) {
            Some(sealed) => {
                page::ask_for_key(&form.asking(), &sealed, Some(problem), form.m.is_some())
            }
            None => page::cannot_go_on(StatusCode::SERVICE_UNAVAILABLE, page::NOT_MADE),
        }
    };
    let key = match form.m.as_deref().map(Key::parse) {
        Some(Ok(claimed)) => claimed,
        Some(Err(_)) => return page::cannot_go_on(StatusCode::BAD_REQUEST, page::NOT_MADE),
        None => {
            if !front.take_a_new_key_turn(here.peer) {
                return again(form, page::TOO_MANY_KEYS);
            }
            match key_from(front.sign_in(), credential.unwrap_or_default().trim()).await {
                Ok((key, claimed)) => {
                    if claimed {
                        form.m = Some(key.expose_for_keeping().to_owned());
                    }
                    key
                }
                Err(problem) => return again(form, &problem),
            }
        }
    };
    let offer = match front.standing_of(key.clone()).await {
        Verdict::Accepted(Some(offer)) => offer,
        Verdict::Accepted(None) => return again(form, page::NOTHING_KNOWN),
        Verdict::Refused => {
            form.m = None;
            return again(form, page::KEY_REFUSED);
        }
        Verdict::Unreachable => return again(form, page::STACK_UNREACHABLE),
        Verdict::Throttled(_) => return again(form, page::STACK_THROTTLED),
        Verdict::NotPinned => return again(form, page::STACK_NOT_PINNED),
    };
    form.k = Some(key.expose_for_keeping().to_owned());
    form.m = None;
    form.x = now() + FORM_LIFE;
    match front.sign_in().sealer.seal(&FORM, &form) {
        Some(sealed) => page::ask_to_allow(&form.asking(), &sealed, &offer, front.consent()),
        None => page::cannot_go_on(StatusCode::SERVICE_UNAVAILABLE, page::NOT_MADE),
    }
}

/// The key a person gave, and whether a key link was traded for it: an integration key as it
/// is, or a key link for this server's stack, claimed once at the stack this server serves
/// (never at the address the link names, which is the giver's to choose). A problem is said in
/// the page's words.
async fn key_from(sign_in: &SignIn, credential: &str) -> Result<(Key, bool), String> {
    if credential.starts_with("https://") {
        let link = link::parse(credential).map_err(|_| page::NOT_A_KEY_OR_LINK.to_owned())?;
        if link.stack.pin != sign_in.stack.pin {
            return Err(page::LINK_FOR_ANOTHER_STACK.to_owned());
        }
        let minted =
            link::claim_at(&sign_in.stack, &link)
                .await
                .map_err(|failure| match failure {
                    LinkFailure::Spent => page::LINK_SPENT.to_owned(),
                    LinkFailure::Expired => page::LINK_EXPIRED.to_owned(),
                    LinkFailure::Unknown | LinkFailure::Refused(_) => page::LINK_UNKNOWN.to_owned(),
                    LinkFailure::MaybeSpent(..) | LinkFailure::NoKeyBack(..) => {
                        page::LINK_MAYBE_SPENT.to_owned()
                    }
                    _ => page::LINK_NOT_CLAIMED.to_owned(),
                })?;
        return Ok((minted.key, true));
    }
    Key::parse(credential)
        .map(|key| (key, false))
        .map_err(|_| page::NOT_A_KEY_OR_LINK.to_owned())
}

/// The second step: allowed, a code goes back to the client; denied, the denial does.
fn decided(
    sign_in: &SignIn,
    here: &Here,
    form: &Form,
    key: &str,
    decision: Option<&str>,
) -> Response {
    let state = form.s.as_deref();
    if decision != Some("allow") {
        return send_back(
            &form.r,
            here,
            state,
            Err(("access_denied", "The person did not allow it.")),
        );
    }
    let code = Key::parse(key).ok().and_then(|key| {
        let client = (form.c.as_str(), form.n.as_deref());
        tokens::seal_code(sign_in, &key, client, &form.r, &form.p, &form.a)
    });
    match code {
        Some(code) => send_back(&form.r, here, state, Ok(&code)),
        None => page::cannot_go_on(StatusCode::SERVICE_UNAVAILABLE, page::NOT_MADE),
    }
}

/// Sends the browser back to the client's redirect URI with the code, or with an error, the
/// client's `state` and this server as the issuer (RFC 9207).
fn send_back(
    redirect: &str,
    here: &Here,
    state: Option<&str>,
    answer: Result<&str, (&str, &str)>,
) -> Response {
    let Ok(mut back) = url::Url::parse(redirect) else {
        return page::cannot_go_on(StatusCode::BAD_REQUEST, page::WRONG_REDIRECT);
    };
    {
        let mut query = back.query_pairs_mut();
        match answer {
            Ok(code) => query.append_pair("code", code),
            Err((error, description)) => query
                .append_pair("error", error)
                .append_pair("error_description", description),
        };
        if let Some(state) = state {
            query.append_pair("state", state);
        }
        query.append_pair("iss", &here.issuer);
    }
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let Ok(location) = HeaderValue::from_str(back.as_str()) {
        headers.insert(header::LOCATION, location);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}

/// Whether the browser says the form came from another site: by `Sec-Fetch-Site`, or by an
/// `Origin` that is not this server's.
fn is_cross_site(headers: &HeaderMap, here: &Here) -> bool {
    let site = headers
        .get("sec-fetch-site")
        .and_then(|value| value.to_str().ok());
    let origin = headers
        .get(header::ORIGIN)
        .and_then(|value| value.to_str().ok());
    matches!(site, Some(site) if site != "same-origin" && site != "none")
        || origin.is_some_and(|origin| !origin.eq_ignore_ascii_case(&here.issuer))
}

/// This browser's binding, from its cookie.
fn binding_of(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|cookies| cookies.split(';'))
        .find_map(|cookie| {
            cookie
                .trim()
                .strip_prefix(BINDING_COOKIE)?
                .strip_prefix('=')
        })
}

fn digest(binding: &str) -> String {
    hex::encode(Sha256::digest(binding.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    fn here() -> Here {
        Here {
            issuer: "https://mcp.example:8443".to_owned(),
            peer: IpAddr::from([127, 0, 0, 1]),
            _turn: Box::new(()),
            _answering: None,
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_str(value).expect("a value"));
        }
        headers
    }

    #[test]
    fn a_form_from_another_site_is_told_apart() {
        assert!(!is_cross_site(&headers(&[]), &here()));
        assert!(!is_cross_site(
            &headers(&[
                ("origin", "https://mcp.example:8443"),
                ("sec-fetch-site", "same-origin")
            ]),
            &here()
        ));
        assert!(is_cross_site(
            &headers(&[("origin", "https://evil.example")]),
            &here()
        ));
        assert!(is_cross_site(
            &headers(&[("sec-fetch-site", "cross-site")]),
            &here()
        ));
        assert!(is_cross_site(
            &headers(&[("sec-fetch-site", "same-site")]),
            &here()
        ));
        assert!(is_cross_site(&headers(&[("origin", "null")]), &here()));
    }

    #[test]
    fn the_binding_is_read_from_among_other_cookies() {
        let given = headers(&[("cookie", "a=1; __Host-lfmcp-sign-in=abc; b=2")]);
        assert_eq!(binding_of(&given), Some("abc"));
        assert_eq!(
            binding_of(&headers(&[("cookie", "__Host-lfmcp-sign-inx=abc")])),
            None
        );
    }

    #[test]
    fn the_answer_goes_back_with_state_and_issuer_kept_apart_from_the_redirects_own_query() {
        let back = send_back(
            "https://client.example/cb?keep=1",
            &here(),
            Some("s&t"),
            Ok("c0de"),
        );
        let location = back.headers()[header::LOCATION].to_str().expect("text");
        assert_eq!(
            location,
            "https://client.example/cb?keep=1&code=c0de&state=s%26t&iss=https%3A%2F%2Fmcp.example%3A8443"
        );
        assert_eq!(back.status(), StatusCode::SEE_OTHER);
    }
}
