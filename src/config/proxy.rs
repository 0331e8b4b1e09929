//! Serving behind a reverse proxy or a tunnel, which ends the public TLS and forwards to this
//! server over TLS of its own: the URL clients really use, and which proxies' word about the
//! client's address is believed. Neither is assumed: without them, the server is what the
//! client reached and the connection's peer is the client.

use std::net::IpAddr;

use ipnet::IpNet;

use super::{ConfigError, PUBLIC_PORT};

pub const PUBLIC_URL: &str = "LEMONFIBER_PUBLIC_URL";
pub const TRUSTED_PROXIES: &str = "LEMONFIBER_TRUSTED_PROXIES";
pub const FORWARDED_HEADER: &str = "LEMONFIBER_FORWARDED_HEADER";
/// Where MCP is served; a public URL names this path, since sign-in is served beside it at the
/// root of the same site.
const MCP_PATH: &str = "/mcp";

/// The URL clients use to reach this server's MCP endpoint, when a proxy puts it at another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrl {
    /// `https://host`, with the port only when it is not 443: the issuer of sign-in.
    pub origin: String,
    /// The host, as a served name is written (lower case; an IPv6 address without brackets).
    pub host: String,
    pub port: u16,
}

impl PublicUrl {
    /// The MCP endpoint's URL: the resource every token is for.
    pub fn mcp(&self) -> String {
        format!("{}{MCP_PATH}", self.origin)
    }
}

/// Which header a trusted proxy writes the client's address in. Only the one the proxy itself
/// writes can be believed: a proxy passes the other on as the client sent it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ForwardedHeader {
    #[default]
    XForwardedFor,
    /// RFC 7239's `Forwarded: for=…`.
    Forwarded,
}

impl ForwardedHeader {
    pub fn name(self) -> &'static str {
        match self {
            ForwardedHeader::XForwardedFor => "x-forwarded-for",
            ForwardedHeader::Forwarded => "forwarded",
        }
    }
}

/// The proxies whose forwarded header is believed, and the header they write.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    pub blocks: Vec<IpNet>,
    pub header: ForwardedHeader,
}

impl TrustedProxies {
    pub fn trusts(&self, address: IpAddr) -> bool {
        self.blocks.iter().any(|block| block.contains(&address))
    }
}

/// Why a public URL is not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublicUrlFault {
    NotAUrl,
    NotHttps,
    Credentials,
    QueryOrFragment,
    NotMcpPath,
}

impl std::fmt::Display for PublicUrlFault {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        out.write_str(match self {
            PublicUrlFault::NotAUrl => "it is not a URL",
            PublicUrlFault::NotHttps => "it is not https",
            PublicUrlFault::Credentials => "it carries a user name or password",
            PublicUrlFault::QueryOrFragment => "it has a query or a fragment",
            PublicUrlFault::NotMcpPath => {
                "its path must be /mcp, since sign-in is served at the root of the same site and the proxy \
                 forwards the whole site unchanged"
            }
        })
    }
}

/// The public URL, if one is set; never together with the public port, which it names itself.
pub fn public_url(set: &impl Fn(&str) -> Option<String>) -> Result<Option<PublicUrl>, ConfigError> {
    let Some(text) = set(PUBLIC_URL) else {
        return Ok(None);
    };
    if set(PUBLIC_PORT).is_some() {
        return Err(ConfigError::PublicUrlAndPort);
    }
    let fault = ConfigError::BadPublicUrl;
    let url = url::Url::parse(text.trim()).map_err(|_| fault(PublicUrlFault::NotAUrl))?;
    if url.scheme() != "https" {
        return Err(fault(PublicUrlFault::NotHttps));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(fault(PublicUrlFault::Credentials));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(fault(PublicUrlFault::QueryOrFragment));
    }
    if url.path() != MCP_PATH {
        return Err(fault(PublicUrlFault::NotMcpPath));
    }
    let host = match url.host() {
        Some(url::Host::Domain(name)) => name.to_ascii_lowercase(),
        Some(url::Host::Ipv4(address)) => address.to_string(),
        Some(url::Host::Ipv6(address)) => address.to_string(),
        None => return Err(fault(PublicUrlFault::NotAUrl)),
    };
    Ok(Some(PublicUrl {
        origin: url.origin().ascii_serialization(),
        host,
        port: url.port_or_known_default().unwrap_or(443),
    }))
}

/// The widest blocks taken: every machine in a trusted block can name itself any address, so a
/// block wider than a network of one's own is a mistake (or every address, split in two).
const WIDEST_V4: u8 = 8;
const WIDEST_V6: u8 = 16;

/// The trusted proxies: none unless named, and never more than a network's worth.
pub fn trusted_proxies(
    set: &impl Fn(&str) -> Option<String>,
) -> Result<TrustedProxies, ConfigError> {
    let header = set(FORWARDED_HEADER).map(|value| value.trim().to_ascii_lowercase());
    let header = match (header.as_deref(), set(TRUSTED_PROXIES)) {
        (Some(_), None) => return Err(ConfigError::ForwardedHeaderAlone),
        (None | Some("x-forwarded-for"), _) => ForwardedHeader::XForwardedFor,
        (Some("forwarded"), _) => ForwardedHeader::Forwarded,
        (Some(_), _) => return Err(ConfigError::BadForwardedHeader),
    };
    let Some(text) = set(TRUSTED_PROXIES) else {
        return Ok(TrustedProxies::default());
    };
    let blocks = text
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(block_of)
        .collect::<Result<_, _>>()?;
    Ok(TrustedProxies { blocks, header })
}

/// One entry of the trusted proxies: an address or a block, an IPv4 one however it is written
/// (as the peer it is matched against is).
fn block_of(entry: &str) -> Result<IpNet, ConfigError> {
    let block = match entry.parse::<IpNet>() {
        Ok(block) => block.trunc(),
        Err(_) => entry
            .parse::<IpAddr>()
            .map(IpNet::from)
            .map_err(|_| ConfigError::BadTrustedProxy(entry.to_owned()))?,
    };
    let block = match block {
        IpNet::V6(v6) if v6.prefix_len() >= 96 => match v6.addr().to_ipv4_mapped() {
            Some(v4) => IpNet::new(IpAddr::V4(v4), v6.prefix_len() - 96).unwrap_or(block),
            None => block,
        },
        _ => block,
    };
    let widest = match block {
        IpNet::V4(_) => WIDEST_V4,
        IpNet::V6(_) => WIDEST_V6,
    };
    if block.prefix_len() < widest {
        return Err(ConfigError::ProxyBlockTooWide(entry.to_owned()));
    }
    Ok(block)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        |name| {
            pairs
                .iter()
                .find(|(set, _)| *set == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    #[test]
    fn a_public_url_is_the_https_mcp_url_and_names_its_origin_host_and_port() {
        let read = |text| public_url(&given(&[(PUBLIC_URL, text)]));
        assert_eq!(
            read("https://MCP.Example.net/mcp").expect("taken"),
            Some(PublicUrl {
                origin: "https://mcp.example.net".into(),
                host: "mcp.example.net".into(),
                port: 443,
            })
        );
        let bracketed = read("https://[2001:db8::1]:8443/mcp")
            .expect("taken")
            .expect("set");
        assert_eq!(bracketed.origin, "https://[2001:db8::1]:8443");
        assert_eq!(bracketed.host, "2001:db8::1");
        assert_eq!(bracketed.port, 8443);
        assert_eq!(bracketed.mcp(), "https://[2001:db8::1]:8443/mcp");
        assert_eq!(public_url(&given(&[])).expect("unset"), None);
        for (text, fault) in [
            ("mcp.example.net/mcp", PublicUrlFault::NotAUrl),
            ("http://mcp.example.net/mcp", PublicUrlFault::NotHttps),
            (
                "https://me:pw@mcp.example.net/mcp",
                PublicUrlFault::Credentials,
            ),
            (
                "https://mcp.example.net/mcp?x=1",
                PublicUrlFault::QueryOrFragment,
            ),
            (
                "https://mcp.example.net/mcp#x",
                PublicUrlFault::QueryOrFragment,
            ),
            ("https://mcp.example.net/", PublicUrlFault::NotMcpPath),
            (
                "https://mcp.example.net/lemonfiber/mcp",
                PublicUrlFault::NotMcpPath,
            ),
        ] {
            assert!(
                matches!(read(text), Err(ConfigError::BadPublicUrl(said)) if said == fault),
                "{text}"
            );
        }
        assert!(matches!(
            public_url(&given(&[
                (PUBLIC_URL, "https://a.example/mcp"),
                (PUBLIC_PORT, "443")
            ])),
            Err(ConfigError::PublicUrlAndPort)
        ));
    }

    #[test]
    fn trusted_proxies_are_addresses_or_blocks_and_never_everyone() {
        let read = |pairs: &[(&str, &str)]| trusted_proxies(&given(pairs));
        assert_eq!(read(&[]).expect("unset"), TrustedProxies::default());
        let proxies =
            read(&[(TRUSTED_PROXIES, "127.0.0.1, 10.1.2.3/8,fd00::/16,")]).expect("taken");
        assert_eq!(proxies.header, ForwardedHeader::XForwardedFor);
        for trusted in ["127.0.0.1", "10.200.0.1", "fd00:12::1"] {
            assert!(
                proxies.trusts(trusted.parse().expect("address")),
                "{trusted}"
            );
        }
        for not in ["127.0.0.2", "11.0.0.1", "fd12::1"] {
            assert!(!proxies.trusts(not.parse().expect("address")), "{not}");
        }
        let forwarded = read(&[(TRUSTED_PROXIES, "::1"), (FORWARDED_HEADER, " Forwarded ")]);
        assert_eq!(forwarded.expect("taken").header, ForwardedHeader::Forwarded);
        assert!(matches!(
            read(&[(TRUSTED_PROXIES, "127.0.0.1,10.0.0/8")]),
            Err(ConfigError::BadTrustedProxy(entry)) if entry == "10.0.0/8"
        ));
        for (wide, entry) in [
            ("0.0.0.0/0", "0.0.0.0/0"),
            ("127.0.0.1,::/0", "::/0"),
            ("0.0.0.0/1,128.0.0.0/1", "0.0.0.0/1"),
            ("fd00::/8", "fd00::/8"),
        ] {
            assert!(
                matches!(read(&[(TRUSTED_PROXIES, wide)]), Err(ConfigError::ProxyBlockTooWide(said)) if said == entry),
                "{wide}"
            );
        }
        let mapped =
            read(&[(TRUSTED_PROXIES, "::ffff:127.0.0.1, ::ffff:10.0.0.0/104")]).expect("taken");
        assert!(mapped.trusts("127.0.0.1".parse().expect("address")));
        assert!(mapped.trusts("10.1.2.3".parse().expect("address")));
        assert!(matches!(
            read(&[(TRUSTED_PROXIES, "::1"), (FORWARDED_HEADER, "x-real-ip")]),
            Err(ConfigError::BadForwardedHeader)
        ));
        assert!(matches!(
            read(&[(FORWARDED_HEADER, "forwarded")]),
            Err(ConfigError::ForwardedHeaderAlone)
        ));
    }
}
