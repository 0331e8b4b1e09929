//! The places a client may send a person back to after sign-in, whether it registered them or
//! its metadata document lists them: the one check both kinds of client pass.

use serde_json::Value;

use crate::answer::shows_as_written;

/// The most redirect URIs one client registers, and the longest each may be: a client id carries
/// them all, and travels in every sign-in's URL.
const REDIRECTS_MOST: usize = 4;
const REDIRECT_LONGEST: usize = 512;

/// A client's redirect URIs, each one this server may send a person back to.
pub fn redirects_of(given: Option<&Value>) -> Result<Vec<String>, String> {
    let Some(given) = given
        .and_then(Value::as_array)
        .filter(|uris| !uris.is_empty())
    else {
        return Err("redirect_uris must list at least one redirect URI.".to_owned());
    };
    if given.len() > REDIRECTS_MOST {
        return Err(format!(
            "redirect_uris may list at most {REDIRECTS_MOST} redirect URIs."
        ));
    }
    given
        .iter()
        .map(|uri| {
            let uri = uri
                .as_str()
                .ok_or_else(|| "Each redirect URI must be text.".to_owned())?;
            redirect_allowed(uri).map(|()| uri.to_owned())
        })
        .collect()
}

/// A redirect URI a person may be sent back to: `https`, or `http` on this device's loopback for
/// a local client; whole, with no fragment, and not longer than a client id can carry. Nothing in
/// it may be hidden or dropped on the way to the browser: a URL parser drops tabs and line breaks
/// and trims spaces, and a bidirectional control shows the text in another order, so a URI that
/// holds one could show one place on the sign-in page and send the person to another.
fn redirect_allowed(uri: &str) -> Result<(), String> {
    if uri.len() > REDIRECT_LONGEST {
        return Err(format!(
            "A redirect URI may be at most {REDIRECT_LONGEST} characters."
        ));
    }
    if !shows_as_written(uri) || uri.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(
            "A redirect URI may hold no control, invisible, bidirectional or white-space characters: \
             they would make the sign-in page show another place than the one the person is sent to."
                .to_owned(),
        );
    }
    let parsed =
        url::Url::parse(uri).map_err(|_| "A redirect URI is not an absolute URL.".to_owned())?;
    if parsed.fragment().is_some() || !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("A redirect URI may carry no fragment, user name or password.".to_owned());
    }
    let loopback = match parsed.host() {
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(address)) => address.is_loopback(),
        Some(url::Host::Ipv6(address)) => address.is_loopback(),
        None => false,
    };
    match parsed.scheme() {
        "https" if parsed.host().is_some() => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err(
            "A redirect URI must be https, or http on the loopback address (127.0.0.1, [::1] or localhost)."
                .to_owned(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn redirects_are_https_or_loopback_http_whole_and_short() {
        for allowed in [
            "https://assistant.example/callback",
            "http://127.0.0.1:33418/callback",
            "http://[::1]:8080/cb",
            "http://localhost/cb?x=1",
        ] {
            assert_eq!(redirect_allowed(allowed), Ok(()), "{allowed}");
        }
        for refused in [
            "http://assistant.example/callback",
            "https://assistant.example/cb#part",
            "https://user:pass@assistant.example/cb",
            "javascript:alert(1)",
            "/callback",
            "http://10.0.0.1/cb",
        ] {
            assert!(redirect_allowed(refused).is_err(), "{refused}");
        }
        // Issue 27, item 6: what a URL parser drops or a reader cannot see.
        for hidden in [
            "https://good.example\t/cb",
            "https://good.example/\r\ncb",
            "https://good.example/cb\n",
            " https://good.example/cb",
            "https://good.example/c b",
            "https://evil.example/\u{202e}elpmaxe.doog",
            "https://good.example\u{200b}.evil.example/cb",
            "https://good.example/cb\u{2066}",
            "https://good.example/cb\u{ad}",
        ] {
            let refused = redirect_allowed(hidden).expect_err(hidden);
            assert!(refused.contains("bidirectional"), "{refused}");
        }
        let long = format!("https://a.example/{}", "x".repeat(REDIRECT_LONGEST));
        assert!(redirect_allowed(&long).is_err());
        assert!(redirects_of(Some(&json!([]))).is_err());
        assert!(redirects_of(Some(&json!(vec!["https://a.example/1"; 5]))).is_err());
    }
}
