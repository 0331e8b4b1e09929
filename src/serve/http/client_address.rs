//! The address a request is counted and recorded under: the connection's peer, unless the peer is
//! a trusted proxy (`LEMONFIBER_TRUSTED_PROXIES`), whose forwarded header then names the client.
//! Each proxy adds the address it was reached from at the right of the header, so it is read from
//! the right: past the trusted proxies, the first address is the client's, and whatever lies
//! further left was written by the client and is not believed. A header from a peer that is not
//! trusted is never read at all.

use std::net::{IpAddr, SocketAddr};

use axum::extract::ConnectInfo;
use axum::http::HeaderMap;
use axum::http::request::Parts;

use crate::config::{ForwardedHeader, TrustedProxies};

/// How many forwarded addresses are read, from the right, before the server stops looking: a
/// chain of real proxies is short, and a longer one is only somebody's padding.
const HOPS_READ: usize = 16;

/// The client a request came from, as far as the trusted proxies vouch for it.
pub fn of(parts: &Parts, trusted: &TrustedProxies) -> IpAddr {
    let peer = parts
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(IpAddr::from([0, 0, 0, 0]), |ConnectInfo(peer)| peer.ip());
    client_of(peer, &parts.headers, trusted)
}

fn client_of(peer: IpAddr, headers: &HeaderMap, trusted: &TrustedProxies) -> IpAddr {
    let mut client = peer.to_canonical();
    if !trusted.trusts(client) {
        return client;
    }
    // Each entry is decoded on its own, so one the client filled with other bytes stops the
    // reading where it sits, not at the right where the proxy wrote.
    let hops = headers
        .get_all(trusted.header.name())
        .iter()
        .rev()
        .flat_map(|value| value.as_bytes().rsplit(|&byte| byte == b','))
        .take(HOPS_READ)
        .map(|hop| std::str::from_utf8(hop).ok());
    for hop in hops {
        let named = hop.and_then(|hop| match trusted.header {
            ForwardedHeader::XForwardedFor => address_of(hop),
            ForwardedHeader::Forwarded => forwarded_for(hop).and_then(address_of),
        });
        // A hop that names no address (`unknown`, a hidden name, a mangled entry) hides who is
        // beyond it: the last address vouched for is the client.
        let Some(address) = named else {
            return client;
        };
        client = address.to_canonical();
        if !trusted.trusts(client) {
            return client;
        }
    }
    client
}

/// The `for` of one element of RFC 7239's `Forwarded`, unquoted.
fn forwarded_for(element: &str) -> Option<&str> {
    element.split(';').find_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("for")
            .then(|| value.trim().trim_matches('"'))
    })
}

/// The address a forwarded node names: an address, with or without its port, an IPv6 address in
/// brackets or not.
fn address_of(node: &str) -> Option<IpAddr> {
    let node = node.trim();
    node.parse::<IpAddr>()
        .ok()
        .or_else(|| node.parse::<SocketAddr>().ok().map(|socket| socket.ip()))
        .or_else(|| {
            node.strip_prefix('[')
                .and_then(|rest| rest.strip_suffix(']'))
                .and_then(|inside| inside.parse().ok())
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn proxies(blocks: &[&str], header: ForwardedHeader) -> TrustedProxies {
        TrustedProxies {
            blocks: blocks
                .iter()
                .map(|block| block.parse().expect("a block"))
                .collect(),
            header,
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_str(value).expect("a value"));
        }
        headers
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("an address")
    }

    #[test]
    fn a_forwarded_header_from_a_peer_not_trusted_is_never_read() {
        let forged = headers(&[
            ("x-forwarded-for", "203.0.113.9"),
            ("forwarded", "for=203.0.113.9"),
        ]);
        let none = TrustedProxies::default();
        assert_eq!(client_of(ip("192.0.2.1"), &forged, &none), ip("192.0.2.1"));
        let others = proxies(&["10.0.0.0/8"], ForwardedHeader::XForwardedFor);
        assert_eq!(
            client_of(ip("192.0.2.1"), &forged, &others),
            ip("192.0.2.1")
        );
    }

    #[test]
    fn behind_trusted_proxies_the_client_is_the_first_address_from_the_right_they_do_not_cover() {
        let trusted = proxies(
            &["127.0.0.1/32", "10.0.0.0/8"],
            ForwardedHeader::XForwardedFor,
        );
        let peer = ip("127.0.0.1");
        let client = |pairs: &[(&'static str, &str)]| client_of(peer, &headers(pairs), &trusted);
        assert_eq!(
            client(&[("x-forwarded-for", "198.51.100.7")]),
            ip("198.51.100.7")
        );
        assert_eq!(
            client(&[("x-forwarded-for", "6.6.6.6, 198.51.100.7, 10.1.1.1")]),
            ip("198.51.100.7"),
            "what the client wrote at the left is not believed"
        );
        assert_eq!(
            client(&[
                ("x-forwarded-for", "6.6.6.6"),
                ("x-forwarded-for", "198.51.100.7")
            ]),
            ip("198.51.100.7"),
            "several header lines are one list, in order"
        );
        assert_eq!(
            client(&[("x-forwarded-for", "[2001:db8::5]:4711")]),
            ip("2001:db8::5")
        );
        assert_eq!(
            client(&[("x-forwarded-for", "198.51.100.7:80")]),
            ip("198.51.100.7")
        );
        assert_eq!(
            client(&[("x-forwarded-for", "::ffff:198.51.100.7")]),
            ip("198.51.100.7")
        );
        assert_eq!(client(&[]), peer, "the proxy's own request");
        assert_eq!(
            client(&[("x-forwarded-for", "198.51.100.7, unknown, 10.1.1.1")]),
            ip("10.1.1.1"),
            "beyond an entry naming no address, nobody is vouched for"
        );
        assert_eq!(
            client(&[("forwarded", "for=198.51.100.7")]),
            peer,
            "the header the proxy does not write is the client's own"
        );
        assert_eq!(
            client_of(
                ip("::ffff:127.0.0.1"),
                &headers(&[("x-forwarded-for", "198.51.100.7")]),
                &trusted
            ),
            ip("198.51.100.7"),
            "a trusted IPv4 peer reached over IPv6 is still trusted"
        );
        let mut padded = vec!["198.51.100.7"];
        padded.extend(["10.0.0.1"; HOPS_READ]);
        assert_eq!(
            client(&[("x-forwarded-for", &padded.join(","))]),
            ip("10.0.0.1"),
            "no more than {HOPS_READ} entries are read"
        );
        let mut raw = headers(&[]);
        raw.append(
            "x-forwarded-for",
            HeaderValue::from_bytes(b"\xff\xfe, 198.51.100.7").expect("a value"),
        );
        assert_eq!(
            client_of(peer, &raw, &trusted),
            ip("198.51.100.7"),
            "bytes the client sent at the left do not hide what the proxy wrote at the right"
        );
    }

    #[test]
    fn rfc_7239_forwarded_is_read_when_the_proxies_write_it() {
        let trusted = proxies(&["::1/128"], ForwardedHeader::Forwarded);
        let client =
            |value: &str| client_of(ip("::1"), &headers(&[("forwarded", value)]), &trusted);
        assert_eq!(
            client("for=6.6.6.6, for=192.0.2.60;proto=https;by=203.0.113.43"),
            ip("192.0.2.60")
        );
        assert_eq!(
            client("For=\"[2001:db8:cafe::17]:4711\""),
            ip("2001:db8:cafe::17")
        );
        assert_eq!(client("for=198.51.100.7, for=_hidden"), ip("::1"));
        assert_eq!(
            client("for=\"[2001:db8::1],x\", for=192.0.2.60"),
            ip("192.0.2.60")
        );
        assert_eq!(
            client("for=\"[2001:db8::1]:80,x\""),
            ip("::1"),
            "a quoted comma makes halves that name no address"
        );
        let lines = headers(&[
            ("forwarded", "for=6.6.6.6"),
            ("forwarded", "for=192.0.2.61"),
        ]);
        assert_eq!(client_of(ip("::1"), &lines, &trusted), ip("192.0.2.61"));
        assert_eq!(
            client_of(
                ip("::1"),
                &headers(&[("x-forwarded-for", "6.6.6.6")]),
                &trusted
            ),
            ip("::1")
        );
    }
}
