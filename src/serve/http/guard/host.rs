//! What a `Host` header (or an absolute-form target's authority) names, read as the `http` crate
//! reads an authority, then held to more than it asks: a name or address and at most a port, and
//! nothing else that would ride along into the URLs this server makes from it.

use axum::http::uri::Authority;

/// HTTPS's own port, which a `Host` without one (or with an empty one) means.
const HTTPS_PORT: u16 = 443;

/// The most digits a port is written with; more is refused even when they are leading zeros.
const LONGEST_PORT: usize = 5;

/// A host and the port it is reached at, and nothing else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostAndPort {
    /// In lower case, as a URL names it: an IPv6 address in brackets.
    in_url: String,
    pub port: u16,
}

impl HostAndPort {
    /// What `given` names, if it is a host and at most a port: never userinfo, a path, a zone,
    /// a percent sign or any character a served name cannot hold, nor a port that is not one.
    pub fn parse(given: &str) -> Option<HostAndPort> {
        let given = given.trim().to_ascii_lowercase();
        let authority = Authority::try_from(given.as_str()).ok()?;
        let host = authority.host();
        // The authority's host follows any userinfo; one that does not start it has some.
        let after_host = authority.as_str().strip_prefix(host)?;
        let port = match after_host.strip_prefix(':') {
            None if after_host.is_empty() => HTTPS_PORT,
            None => return None,
            Some("") => HTTPS_PORT,
            Some(digits)
                if digits.len() <= LONGEST_PORT && digits.bytes().all(|b| b.is_ascii_digit()) =>
            {
                digits.parse().ok()?
            }
            Some(_) => return None,
        };
        let (name, bracketed) = match host.strip_prefix('[') {
            Some(inside) => (inside.strip_suffix(']')?, true),
            None => (host, false),
        };
        let is_plain = name.bytes().all(|byte| {
            byte.is_ascii_alphanumeric()
                || matches!(byte, b'.' | b'-' | b'_')
                || (bracketed && byte == b':')
        });
        (is_plain && !name.is_empty()).then(|| HostAndPort {
            in_url: host.to_owned(),
            port,
        })
    }

    /// The host as a served name is listed: an IPv6 address without its brackets.
    pub fn name(&self) -> &str {
        self.in_url
            .strip_prefix('[')
            .and_then(|inside| inside.strip_suffix(']'))
            .unwrap_or(&self.in_url)
    }

    /// The host and port as a URL names them: without HTTPS's own port.
    pub fn as_url_names_it(&self) -> String {
        if self.port == HTTPS_PORT {
            self.in_url.clone()
        } else {
            format!("{}:{}", self.in_url, self.port)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(given: &str) -> Option<(String, u16, String)> {
        HostAndPort::parse(given).map(|named| {
            let name = named.name().to_owned();
            (name, named.port, named.as_url_names_it())
        })
    }

    #[test]
    fn a_host_is_a_name_or_address_and_a_port_and_is_named_as_a_url_names_it() {
        for taken in [
            "mcp.example",
            "lemonfiber_mcp:8443",
            "[::1]:8443",
            "127.0.0.1",
            "name:",
        ] {
            assert!(HostAndPort::parse(taken).is_some(), "{taken}");
        }
        for refused in [
            "mcp.example:84x",
            "[::1]\"x",
            "a b",
            "mcp.example:123456",
            "::1",
        ] {
            assert_eq!(parsed(refused), None, "{refused}");
        }
        let port = |given| HostAndPort::parse(given).map(|named| named.port);
        assert_eq!(port("mcp.example"), Some(443));
        assert_eq!(port("name:"), Some(443));
        assert_eq!(port("mcp.example:8443"), Some(8443));
        assert_eq!(port("[::1]:9"), Some(9));
        assert_eq!(port("[::1]"), Some(443));
        assert_eq!(port("mcp.example:99999"), None);
        let in_url = |given| HostAndPort::parse(given).map(|named| named.as_url_names_it());
        assert_eq!(in_url("mcp.example:443").as_deref(), Some("mcp.example"));
        assert_eq!(in_url("name:").as_deref(), Some("name"));
        assert_eq!(in_url("[::1]:8443").as_deref(), Some("[::1]:8443"));
    }

    #[test]
    fn a_host_is_read_in_lower_case_with_an_ipv6_address_named_without_brackets() {
        assert_eq!(
            parsed(" LocalHost:8443 "),
            Some(("localhost".into(), 8443, "localhost:8443".into()))
        );
        assert_eq!(parsed("[::1]"), Some(("::1".into(), 443, "[::1]".into())));
        assert_eq!(
            parsed("[2001:DB8::1]:9"),
            Some(("2001:db8::1".into(), 9, "[2001:db8::1]:9".into()))
        );
        // An empty port is none, as a URL's is.
        assert_eq!(parsed("[::1]:"), Some(("::1".into(), 443, "[::1]".into())));
        // A port written with leading zeros is the port it says, and is named as such.
        assert_eq!(
            parsed("localhost:0443"),
            Some(("localhost".into(), 443, "localhost".into()))
        );
    }

    /// What the `http` crate takes as an authority but a `Host` for this server must not say:
    /// each would put something of the client's making into the URLs handed out, or name a
    /// served host in a way the rest of the checks do not look for.
    #[test]
    fn what_an_authority_may_hold_beyond_a_host_and_port_is_refused() {
        for refused in [
            // Userinfo, with or without a password, and an empty one.
            "a@localhost",
            "a@localhost:8443",
            "a:b@localhost:8443",
            "@localhost",
            "localhost@localhost",
            // A path, query or fragment.
            "localhost:8443/",
            "localhost/x",
            "localhost?x",
            "localhost#x",
            // Percent signs, in a name or as an IPv6 zone.
            "local%68ost",
            "[fe80::1%25eth0]:8443",
            // A port that is not digits alone, or too long to be one.
            "localhost:+443",
            "localhost:-1",
            "localhost: 8443",
            "localhost:8443:8443",
            "localhost:000008443",
            "[::1]8443",
            "[::1]:8443x",
            // Characters a served name cannot hold, though a URI's authority may.
            "local~host",
            "local!host",
            "local$host",
            "local'host",
            "local(host)",
            "local*host",
            "local+host",
            "local,host",
            "local;host",
            "local=host",
            "local&host",
            "[::1",
            "::1]",
            "[[::1]]",
            "[::1]]",
            // No host at all.
            ":8443",
            "[]",
            "",
            "   ",
        ] {
            assert_eq!(parsed(refused), None, "{refused:?}");
        }
    }
}
