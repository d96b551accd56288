//! bincode as the index files use it: one configuration, and decoding
//! bounded by the bytes a record holds.

/// Decodes `len` bytes from `r` with an allocation limit that fits them:
/// bincode claims a container's memory before it allocates it, so a damaged
/// length fails there, named, instead of asking the allocator for
/// petabytes (which aborts the process). The limit allows 64 bytes of
/// memory for every byte read (varints and empty strings expand that much
/// at most), rounded up to a power of 16.
pub(crate) fn decode_limited<T: serde::de::DeserializeOwned>(
    mut r: impl std::io::Read,
    len: u64,
) -> Result<T, bincode::error::DecodeError> {
    use bincode::serde::decode_from_std_read as decode;
    let need = len.saturating_mul(64).max(1 << 24);
    let c = config();
    if need <= 1 << 24 {
        decode(&mut r, c.with_limit::<{ 1 << 24 }>())
    } else if need <= 1 << 28 {
        decode(&mut r, c.with_limit::<{ 1 << 28 }>())
    } else if need <= 1 << 32 {
        decode(&mut r, c.with_limit::<{ 1 << 32 }>())
    } else if need <= 1 << 36 {
        decode(&mut r, c.with_limit::<{ 1 << 36 }>())
    } else {
        decode(&mut r, c.with_limit::<{ 1 << 40 }>())
    }
}

pub(crate) fn config() -> bincode::config::Configuration {
    bincode::config::standard()
}

/// bincode encoding behind a trait object, so one closure encodes both parts.
pub(crate) mod erased {
    pub(crate) trait Encode {
        fn encode_into(
            &self,
            out: &mut dyn std::io::Write,
        ) -> Result<usize, bincode::error::EncodeError>;
    }
    impl<T: serde::Serialize> Encode for T {
        fn encode_into(
            &self,
            mut out: &mut dyn std::io::Write,
        ) -> Result<usize, bincode::error::EncodeError> {
            bincode::serde::encode_into_std_write(self, &mut out, super::config())
        }
    }
}
