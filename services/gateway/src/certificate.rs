//! The subject common name of an X.509 certificate (DER), to bind a tenant to a client
//! certificate. Only the path to the subject is walked (certificate, TBSCertificate,
//! version, serial, signature algorithm, issuer, validity, subject); the TLS stack has
//! already verified the certificate, so this reads, it does not judge. A few dozen
//! lines of DER reading instead of a full X.509 crate for one field.

/// One DER element: its tag, its contents and what follows it.
fn element(der: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = der.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
        (len, &rest[n..])
    };
    if rest.len() < len {
        return None;
    }
    Some((tag, &rest[..len], &rest[len..]))
}

const SEQUENCE: u8 = 0x30;
const SET: u8 = 0x31;
const OID: u8 = 0x06;
/// id-at-commonName, 2.5.4.3.
const COMMON_NAME: &[u8] = &[0x55, 0x04, 0x03];

/// The (last) common name of the certificate's subject, if it has one.
pub fn subject_common_name(der: &[u8]) -> Option<String> {
    let (SEQUENCE, certificate, _) = element(der)? else {
        return None;
    };
    let (SEQUENCE, tbs, _) = element(certificate)? else {
        return None;
    };
    let mut rest = tbs;
    // The explicit version ([0]) is optional.
    if rest.first() == Some(&0xa0) {
        rest = element(rest)?.2;
    }
    // serial, signature algorithm, issuer, validity.
    for _ in 0..4 {
        rest = element(rest)?.2;
    }
    let (SEQUENCE, mut subject, _) = element(rest)? else {
        return None;
    };
    let mut found = None;
    while !subject.is_empty() {
        let (tag, mut set, next) = element(subject)?;
        subject = next;
        if tag != SET {
            return None;
        }
        while !set.is_empty() {
            let (_, attribute, next) = element(set)?;
            set = next;
            let (tag, oid, value) = element(attribute)?;
            if tag == OID && oid == COMMON_NAME {
                let (_, text, _) = element(value)?;
                found = Some(String::from_utf8_lossy(text).into_owned());
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A leaf certificate issued by `CN=topograph-ca` to `O=topograph,
    /// CN=team-a-client` with a DNS name in its subjectAltName (made with openssl).
    const LEAF: &str = "308201a230820149a00302010202140d01df3025604bf0d085dcddceba9bd44287380d300a06082a8648ce3d04030230173115301306035504030c0c746f706f67726170682d63613020170d3236313132353039333930375a180f32313236313130313039333930375a302c31123010060355040a0c09746f706f67726170683116301406035504030c0d7465616d2d612d636c69656e743059301306072a8648ce3d020106082a8648ce3d0301070342000460eac0d4fb92477469417ab45bba0bd55ae7ab5d29b04af598be5a915ec6042a50db29e732fc3b362053e0f33dca6a335abbf52520030583b1c0c28b2b941c07a35c305a30180603551d110411300f820d6f746865722e6578616d706c65301d0603551d0e04160414dc560678f52c54e3a7f45389762a048380161241301f0603551d230418301680141e16e683066ed90da89d98b40b9e0e66c31694b9300a06082a8648ce3d04030203470030440220273c15fafb96e149239d07ace288272c46278c203791932ac0bf5acb23c4cbef02203bfa23799e8f4372cfb8dce0f2f584166a1579f8b4e7a11b07d981c282ec5fb1";

    fn unhex(text: &str) -> Vec<u8> {
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn the_subject_common_name_is_read_not_the_issuers() {
        assert_eq!(
            subject_common_name(&unhex(LEAF)).as_deref(),
            Some("team-a-client")
        );
    }

    #[test]
    fn garbage_has_no_common_name() {
        let der = unhex(LEAF);
        assert_eq!(subject_common_name(&[]), None);
        assert_eq!(subject_common_name(&der[..40]), None);
        assert_eq!(
            subject_common_name(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]),
            None
        );
        assert_eq!(subject_common_name(b"not a certificate"), None);
    }
}
