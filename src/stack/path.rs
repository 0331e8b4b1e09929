//! What may stand in a request's path. An identifier put into a path (a title, a bundle, a job)
//! must be one plain segment; and whatever any caller passes, a request whose final path is not
//! its operation's template, each parameter one whole segment, is never sent.

use percent_encoding::percent_decode_str;

/// The longest identifier taken: far beyond any the stack makes.
const IDENTIFIER_LIMIT: usize = 256;

/// Letters, digits, `-`, `_` and `.`, and not `.` or `..`: nothing a URL parser could turn into
/// another path.
pub fn is_plain_identifier(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= IDENTIFIER_LIMIT
        && text != "."
        && text != ".."
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Whether `path` (as it will be sent) is `template` with each `{parameter}` one whole segment
/// that cannot climb or split.
pub fn fits_template(path: &str, template: &str) -> bool {
    let mut sent = path.split('/');
    let mut expected = template.split('/');
    loop {
        match (sent.next(), expected.next()) {
            (None, None) => return true,
            (Some(segment), Some(part)) if part.starts_with('{') && part.ends_with('}') => {
                if !is_whole_segment(segment) {
                    return false;
                }
            }
            (Some(segment), Some(part)) if segment == part => {}
            _ => return false,
        }
    }
}

fn is_whole_segment(segment: &str) -> bool {
    let Ok(decoded) = percent_decode_str(segment).decode_utf8() else {
        return false;
    };
    !decoded.is_empty()
        && decoded != "."
        && decoded != ".."
        && !decoded
            .chars()
            .any(|c| c == '/' || c == '\\' || c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The path the SDK sends for `/api/held/{id}` with `value`: encoded as progenitor encodes a
    /// path parameter, then parsed as the HTTP client parses it.
    fn sent_path(value: &str) -> String {
        let url = format!(
            "https://127.0.0.1:1/api/held/{}",
            progenitor_client::encode_path(value)
        );
        reqwest::Url::parse(&url).map_or_else(|_| String::new(), |url| url.path().to_owned())
    }

    proptest! {
        /// Whatever the value, a path that passes the template check stays under the template,
        /// one segment deep; and a plain identifier (the only kind the door sends) arrives as
        /// itself, whole, as that segment.
        #[test]
        fn no_path_parameter_value_leaves_its_template(value in "\\PC{0,12}|[./\\\\%a-z0-9]{0,12}") {
            let path = sent_path(&value);
            if fits_template(&path, "/api/held/{id}") {
                prop_assert!(path.starts_with("/api/held/"));
                prop_assert_eq!(path.split('/').count(), 4);
            }
            if is_plain_identifier(&value) {
                prop_assert!(fits_template(&path, "/api/held/{id}"), "{} was refused", value);
                let last = path.rsplit('/').next().unwrap_or_default();
                let decoded = percent_decode_str(last).decode_utf8().expect("utf-8").into_owned();
                prop_assert_eq!(decoded, value);
            }
        }
    }

    #[test]
    fn a_plain_identifier_is_one_segment_of_safe_characters() {
        for good in ["ttl-1", "job-0042", "support-2026-11-18.tar", "A_b.c"] {
            assert!(is_plain_identifier(good), "{good}");
        }
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "..\\credentials",
            "a/b",
            "a%2fb",
            "a\\b",
            "a b",
            "a\u{0}b",
            "ä",
        ] {
            assert!(!is_plain_identifier(bad), "{bad:?}");
        }
    }

    #[test]
    fn a_path_must_be_its_template_with_whole_segments() {
        let template = "/api/held/{id}";
        // Found by the property below: the URL parser makes `.\0` the path `/api/held/0`,
        // within the template but another identifier; only a plain identifier is ever sent.
        assert_eq!(sent_path(".\\0"), "/api/held/0");
        assert!(!is_plain_identifier(".\\0"));
        assert!(fits_template("/api/held/ttl-1", template));
        assert!(fits_template("/api/held/a%20b", template));
        for escaped in [
            "/api/credentials",
            "/api/held",
            "/api/held/",
            "/api/held/a/b",
            "/api/held/..",
            "/api/held/%2e%2e",
            "/api/held/a%2Fb",
            "/api/held/a%5cb",
            "/api/other/ttl-1",
        ] {
            assert!(!fits_template(escaped, template), "{escaped}");
        }
        assert!(fits_template("/api/status", "/api/status"));
        assert!(!fits_template("/api/status/x", "/api/status"));
    }
}
