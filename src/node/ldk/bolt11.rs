//! The one field of a BOLT 11 invoice the LDK client needs and ldk-server does not
//! answer: its payment hash.

/// The payment hash of a BOLT 11 invoice: its `p` field (type 1, 52 five-bit words, of
/// which the first 256 bits are the hash). ldk-server's `Bolt11Receive` answers the
/// invoice only.
pub(super) fn payment_hash_of(bolt11: &str) -> Option<[u8; 32]> {
    use bitcoin::bech32::{Bech32, Fe32, primitives::decode::CheckedHrpstring};
    let checked = CheckedHrpstring::new::<Bech32>(bolt11).ok()?;
    let words: Vec<u8> = checked
        .data_part_ascii_no_checksum()
        .iter()
        .map(|&c| Fe32::from_char(char::from(c)).map(Fe32::to_u8))
        .collect::<Result<_, _>>()
        .ok()?;
    // 7 words of timestamp first, 104 words of signature last, tagged fields between.
    const TIMESTAMP: usize = 7;
    const SIGNATURE: usize = 104;
    let fields = words.get(TIMESTAMP..words.len().checked_sub(SIGNATURE)?)?;
    let mut at = 0;
    while at + 3 <= fields.len() {
        let (tag, len) = (
            fields[at],
            usize::from(fields[at + 1]) * 32 + usize::from(fields[at + 2]),
        );
        let data = fields.get(at + 3..at + 3 + len)?;
        if tag == 1 && len == 52 {
            let mut bytes = Vec::with_capacity(33);
            let (mut acc, mut bits) = (0u32, 0u32);
            for &w in data {
                acc = (acc << 5) | u32::from(w);
                bits += 5;
                if bits >= 8 {
                    bits -= 8;
                    bytes.push((acc >> bits) as u8);
                    acc &= (1 << bits) - 1;
                }
            }
            return bytes.get(..32)?.try_into().ok();
        }
        at += 3 + len;
    }
    None
}
