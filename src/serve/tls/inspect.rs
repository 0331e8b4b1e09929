//! What a certificate says of itself: the names it covers, checked as a client checks them, and
//! the time it is valid for, which says when to renew it.

use std::path::Path;
use std::time::{Duration, SystemTime};

use rustls::pki_types::{CertificateDer, ServerName};

use super::CertError;

/// The names in `names` that `certificate` does not cover, as a client would find.
pub fn uncovered(certificate: &CertificateDer<'_>, names: &[String]) -> Vec<String> {
    let Ok(leaf) = webpki::EndEntityCert::try_from(certificate) else {
        return names.to_vec();
    };
    names
        .iter()
        .filter(|name| {
            ServerName::try_from(name.as_str()).map_or(true, |name| {
                leaf.verify_is_valid_for_subject_name(&name).is_err()
            })
        })
        .cloned()
        .collect()
}

/// When a certificate starts and stops being valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifetime {
    pub not_before: SystemTime,
    pub not_after: SystemTime,
}

impl Lifetime {
    /// The lifetime of `certificate`, read from the file it came from.
    pub fn of(certificate: &CertificateDer<'_>, file: &Path) -> Result<Lifetime, CertError> {
        let (_, parsed) = x509_parser::parse_x509_certificate(certificate)
            .map_err(|_| CertError::NotX509(file.to_owned()))?;
        let validity = parsed.validity();
        Ok(Lifetime {
            not_before: validity.not_before.to_datetime().into(),
            not_after: validity.not_after.to_datetime().into(),
        })
    }

    /// When to renew: once only a third of the lifetime is left.
    pub fn renew_at(&self) -> SystemTime {
        let life = self
            .not_after
            .duration_since(self.not_before)
            .unwrap_or_default();
        self.not_after - life / 3
    }

    /// Whether it is valid at `now`, or why not (naming `file`).
    pub fn check(&self, now: SystemTime, file: &Path) -> Result<(), CertError> {
        if now > self.not_after {
            return Err(CertError::Expired(file.to_owned(), said(self.not_after)));
        }
        if now < self.not_before {
            return Err(CertError::NotYetValid(
                file.to_owned(),
                said(self.not_before),
            ));
        }
        Ok(())
    }
}

/// How long from now until `at` (nothing if it has passed).
pub fn until(at: SystemTime) -> Duration {
    at.duration_since(SystemTime::now()).unwrap_or_default()
}

/// A time as an operator reads it in a message.
pub fn said(at: SystemTime) -> String {
    humantime::format_rfc3339_seconds(at).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn certificate(names: &[&str], life: Duration) -> CertificateDer<'static> {
        let key = rcgen::KeyPair::generate().expect("key");
        let mut params = rcgen::CertificateParams::new(
            names
                .iter()
                .map(|name| (*name).to_owned())
                .collect::<Vec<_>>(),
        )
        .expect("names");
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now - time::Duration::hours(1);
        params.not_after = now + life;
        params.self_signed(&key).expect("signed").der().clone()
    }

    #[test]
    fn names_are_covered_as_a_client_finds_them() {
        let served = certificate(
            &["mcp.home.example", "192.0.2.4"],
            Duration::from_secs(3600),
        );
        let names = |list: &[&str]| {
            list.iter()
                .map(|name| (*name).to_owned())
                .collect::<Vec<_>>()
        };
        assert!(uncovered(&served, &names(&["mcp.home.example", "192.0.2.4"])).is_empty());
        assert_eq!(
            uncovered(
                &served,
                &names(&["mcp.home.example", "other.home.example", "192.0.2.5"])
            ),
            names(&["other.home.example", "192.0.2.5"])
        );
    }

    #[test]
    fn a_third_of_the_life_left_is_the_time_to_renew() {
        let served = certificate(&["mcp.home.example"], Duration::from_secs(2 * 3600));
        let lifetime = Lifetime::of(&served, Path::new("served.pem")).expect("parsed");
        let life = lifetime
            .not_after
            .duration_since(lifetime.not_before)
            .expect("ordered");
        assert_eq!(life, Duration::from_secs(3 * 3600));
        assert_eq!(
            lifetime.renew_at(),
            lifetime.not_after - Duration::from_secs(3600)
        );
        let now = SystemTime::now();
        assert!(lifetime.check(now, Path::new("served.pem")).is_ok());
        let error = lifetime
            .check(now + Duration::from_secs(3 * 3600), Path::new("served.pem"))
            .expect_err("expired");
        assert!(
            error.to_string().contains("served.pem expired at"),
            "{error}"
        );
    }

    /// Dates before 1970 and past 2049 (written as GeneralizedTime rather than UTCTime) are read
    /// to the second, as the certificate says them.
    #[test]
    fn validity_dates_are_read_as_written_either_side_of_1970() {
        let key = rcgen::KeyPair::generate().expect("key");
        let mut params =
            rcgen::CertificateParams::new(vec!["mcp.home.example".to_owned()]).expect("names");
        let at = |seconds| time::OffsetDateTime::from_unix_timestamp(seconds).expect("a date");
        let (before, after) = (315_619_200, 4_102_444_800);
        params.not_before = at(-before);
        params.not_after = at(after);
        let dated = params.self_signed(&key).expect("signed").der().clone();
        let lifetime = Lifetime::of(&dated, Path::new("dated.pem")).expect("parsed");
        let epoch = std::time::UNIX_EPOCH;
        assert_eq!(
            lifetime.not_before,
            epoch - Duration::from_secs(before.unsigned_abs())
        );
        assert_eq!(
            lifetime.not_after,
            epoch + Duration::from_secs(after.unsigned_abs())
        );
        assert_eq!(said(lifetime.not_after), "2100-01-01T00:00:00Z");
    }
}
