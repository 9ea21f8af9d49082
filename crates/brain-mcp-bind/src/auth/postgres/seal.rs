//! Tokens sealed at rest: AES-256-GCM with a key from the environment, bound to the
//! row's key (a sealed row moved to another key does not open), each row naming the key
//! that sealed it so keys can rotate (the first key seals, the others still open).

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

use crate::auth::store::{StoreError, StoreErrorKind};

/// What the sealed bytes are bound to besides the row's key: the format's name.
const CONTEXT: &str = "brain-token-store/v1";

/// The keys rows are sealed with: the first seals, every one opens. Its `Debug` shows
/// the key ids only.
pub(crate) struct Keys {
    keys: Vec<(String, LessSafeKey)>,
    random: SystemRandom,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<&str> = self.keys.iter().map(|(id, _)| id.as_str()).collect();
        f.debug_struct("Keys").field("ids", &ids).finish()
    }
}

/// A key's id: a short digest of it (never the key).
fn key_id(key: &[u8]) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, key);
    URL_SAFE_NO_PAD.encode(&digest.as_ref()[..6])
}

fn config(message: String) -> StoreError {
    StoreError::new(StoreErrorKind::Config, message)
}

impl Keys {
    /// The keys in `value` (the variable `var`'s): comma-separated, each 32 bytes in
    /// standard base64, the first the one that seals. Errors name the variable and the
    /// key's position, never its text.
    pub(crate) fn parse(var: &str, value: &str) -> Result<Self, StoreError> {
        let mut keys = Vec::new();
        for (n, text) in value.split(',').map(str::trim).enumerate() {
            brain_mcp_proto::text::learn(text);
            let bytes = STANDARD
                .decode(text)
                .map_err(|_| config(format!("{var}: key {} is not standard base64", n + 1)))?;
            if bytes.len() != 32 {
                return Err(config(format!(
                    "{var}: key {} is {} bytes, not 32",
                    n + 1,
                    bytes.len()
                )));
            }
            let key = UnboundKey::new(&AES_256_GCM, &bytes)
                .map_err(|_| config(format!("{var}: key {} is unusable", n + 1)))?;
            keys.push((key_id(&bytes), LessSafeKey::new(key)));
        }
        if keys.is_empty() {
            return Err(config(format!("{var}: no key")));
        }
        Ok(Self {
            keys,
            random: SystemRandom::new(),
        })
    }

    /// `plain` sealed for the row `row`: the sealing key's id, and nonce then ciphertext.
    pub(crate) fn seal(&self, row: &str, plain: &[u8]) -> Result<(String, Vec<u8>), StoreError> {
        let (id, key) = &self.keys[0];
        let mut nonce = [0u8; NONCE_LEN];
        self.random.fill(&mut nonce).map_err(|_| {
            StoreError::new(StoreErrorKind::Unavailable, "no randomness to seal tokens")
        })?;
        let mut sealed = plain.to_vec();
        key.seal_in_place_append_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(aad(row, id)),
            &mut sealed,
        )
        .map_err(|_| StoreError::new(StoreErrorKind::Unavailable, "the tokens cannot be sealed"))?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok((id.clone(), out))
    }

    /// The plain bytes of `sealed`, which the key `id` sealed for the row `row`.
    pub(crate) fn open(&self, row: &str, id: &str, sealed: &[u8]) -> Result<Vec<u8>, StoreError> {
        let unreadable = |why: &str| StoreError::new(StoreErrorKind::Unreadable, why.to_owned());
        let Some((_, key)) = self.keys.iter().find(|(k, _)| k == id) else {
            let named = id.len() <= 16
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !named {
                return Err(unreadable("a row's key id is malformed"));
            }
            return Err(unreadable(&format!(
                "a row was sealed with key id {id:?}, which is not among the keys given"
            )));
        };
        if sealed.len() < NONCE_LEN {
            return Err(unreadable("a row's sealed tokens are truncated"));
        }
        let (nonce, body) = sealed.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce)
            .map_err(|_| unreadable("a row's nonce is malformed"))?;
        let mut body = body.to_vec();
        let plain = key
            .open_in_place(nonce, Aad::from(aad(row, id)), &mut body)
            .map_err(|_| {
                unreadable("a row's sealed tokens do not open: corrupt, or sealed for another row")
            })?;
        Ok(plain.to_vec())
    }
}

fn aad(row: &str, id: &str) -> Vec<u8> {
    format!("{CONTEXT}|{id}|{row}").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> String {
        STANDARD.encode([byte; 32])
    }

    #[test]
    fn rows_open_with_their_key_for_their_row_only() {
        let keys = Keys::parse("K", &key(1)).unwrap();
        let (id, sealed) = keys.seal("row-a", b"tokens").unwrap();
        assert_eq!(keys.open("row-a", &id, &sealed).unwrap(), b"tokens");
        let swapped = keys.open("row-b", &id, &sealed).unwrap_err();
        assert_eq!(swapped.kind(), StoreErrorKind::Unreadable);
        let mut corrupt = sealed.clone();
        corrupt[NONCE_LEN + 1] ^= 1;
        assert_eq!(
            keys.open("row-a", &id, &corrupt).unwrap_err().kind(),
            StoreErrorKind::Unreadable
        );
        assert!(keys.open("row-a", &id, &sealed[..4]).is_err());
        // Rotated: the new key seals, the old one still opens what it sealed.
        let rotated = Keys::parse("K", &format!("{}, {}", key(2), key(1))).unwrap();
        assert_eq!(rotated.open("row-a", &id, &sealed).unwrap(), b"tokens");
        let (new_id, _) = rotated.seal("row-a", b"x").unwrap();
        assert_ne!(new_id, id);
        // Without the old key, its rows say which key they need.
        let wrong = Keys::parse("K", &key(3)).unwrap();
        let err = wrong.open("row-a", &id, &sealed).unwrap_err();
        assert!(err.to_string().contains(&id), "{err}");
    }

    #[test]
    fn bad_keys_are_refused_without_showing_them() {
        for (value, says) in [
            ("", "not 32"),
            ("not base64!", "key 1 is not standard base64"),
            (
                &STANDARD.encode([7u8; 16]) as &str,
                "key 1 is 16 bytes, not 32",
            ),
        ] {
            let err = Keys::parse("BRAIN_KEY", value).unwrap_err();
            assert_eq!(err.kind(), StoreErrorKind::Config);
            let text = err.to_string();
            assert!(
                text.starts_with("BRAIN_KEY: ") && text.contains(says),
                "{text}"
            );
        }
        let keys = Keys::parse("K", &key(9)).unwrap();
        assert!(!format!("{keys:?}").contains(&key(9)));
    }
}
