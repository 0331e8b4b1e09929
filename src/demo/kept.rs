//! What the demo keeps in its folder between runs, so that what a person pasted from one run (the
//! stack's address and pin, the key files' paths, the MCP URL) still works on the next: the
//! folder itself (its owner's alone), the stack's certificate, and where the stack and its MCP
//! endpoint listened. The keys are `keys.rs`'s; `--fresh` starts all of them again.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use super::DemoError;
use super::tls::{self, Certificate};

/// The stack's certificate and its key, as hex DER in one file, so they are replaced together.
const CERTIFICATE: &str = "stack-certificate.json";
const ADDRESSES: &str = "addresses.json";
/// The MCP endpoint's own state (its certificate, sign-ins, sealing secret).
const MCP: &str = "mcp";

/// The demo's folder, made its owner's alone.
pub struct Folder(PathBuf);

#[derive(serde::Serialize, serde::Deserialize)]
struct KeptCertificate {
    certificate: String,
    key: String,
}

/// Where the stack and its MCP endpoint listened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Addresses {
    pub stack: SocketAddr,
    pub mcp: SocketAddr,
}

impl Folder {
    /// `folder`, made if missing and made its owner's alone (0700) if it was open to others;
    /// with `fresh`, rid of what an earlier run kept there (and nothing else).
    pub fn open(folder: &Path, fresh: bool) -> Result<Folder, DemoError> {
        crate::state::make_folder(folder).map_err(|source| DemoError::File {
            what: "make",
            path: folder.to_owned(),
            source,
        })?;
        let kept = Folder(folder.to_owned());
        if fresh {
            for file in [CERTIFICATE, ADDRESSES] {
                kept.remove(&folder.join(file), |path| std::fs::remove_file(path))?;
            }
            kept.remove(&kept.mcp_state(), |path| std::fs::remove_dir_all(path))?;
        }
        Ok(kept)
    }

    fn remove(&self, path: &Path, how: fn(&Path) -> std::io::Result<()>) -> Result<(), DemoError> {
        match how(path) {
            Err(source) if source.kind() != std::io::ErrorKind::NotFound => Err(DemoError::File {
                what: "remove",
                path: path.to_owned(),
                source,
            }),
            _ => Ok(()),
        }
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Where the MCP endpoint keeps its own state, which it keeps itself.
    pub fn mcp_state(&self) -> PathBuf {
        self.0.join(MCP)
    }

    /// The certificate kept here, and whether it was; a new one (kept for the next run) when
    /// there is none, it is unusable, or others could read its key.
    pub fn certificate(&self) -> Result<(Certificate, bool), DemoError> {
        let file = self.0.join(CERTIFICATE);
        if let Some(certificate) = self.read::<KeptCertificate>(&file).and_then(|kept| {
            let der = (
                hex::decode(kept.certificate).ok()?,
                hex::decode(kept.key).ok()?,
            );
            tls::from_kept(der).ok()
        }) {
            return Ok((certificate, true));
        }
        let made = tls::make(None)?;
        let kept = KeptCertificate {
            certificate: hex::encode(&made.der.0),
            key: hex::encode(&made.der.1),
        };
        self.write(&file, &kept)?;
        Ok((made, false))
    }

    /// Where the last run listened, if it said.
    pub fn addresses(&self) -> Option<Addresses> {
        self.read(&self.0.join(ADDRESSES))
    }

    pub fn keep_addresses(&self, addresses: Addresses) -> Result<(), DemoError> {
        self.write(&self.0.join(ADDRESSES), &addresses)
    }

    /// What `file` holds, when it is there, only its owner's, and in the form written.
    fn read<T: serde::de::DeserializeOwned>(&self, file: &Path) -> Option<T> {
        if !matches!(crate::state::open_to_others(file), Ok(None)) {
            return None;
        }
        serde_json::from_slice(&std::fs::read(file).ok()?).ok()
    }

    fn write(&self, file: &Path, what: &impl serde::Serialize) -> Result<(), DemoError> {
        let bytes = serde_json::to_vec_pretty(what)?;
        crate::state::write_whole(file, &bytes).map_err(|source| DemoError::File {
            what: "write",
            path: file.to_owned(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let folder =
            std::env::temp_dir().join(format!("lemonfiber-kept-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&folder);
        folder
    }

    #[test]
    fn the_certificate_and_addresses_are_kept_until_fresh_is_asked() {
        let folder = scratch("fresh");
        let first = Folder::open(&folder, false).expect("made");
        let (made, kept) = first.certificate().expect("made");
        assert!(!kept);
        let addresses = Addresses {
            stack: "127.0.0.1:9".parse().expect("an address"),
            mcp: "127.0.0.1:10".parse().expect("an address"),
        };
        first.keep_addresses(addresses).expect("kept");
        let again = Folder::open(&folder, false).expect("opened");
        let (served, kept) = again.certificate().expect("kept");
        assert!(kept);
        assert_eq!(served.pin, made.pin);
        assert_eq!(again.addresses(), Some(addresses));
        let fresh = Folder::open(&folder, true).expect("opened");
        assert_eq!(fresh.addresses(), None);
        let (new, kept) = fresh.certificate().expect("made");
        assert!(!kept);
        assert_ne!(new.pin, made.pin);
        let _ = std::fs::remove_dir_all(&folder);
    }
}
