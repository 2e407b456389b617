//! The key-exchange methods of an SSH KEXINIT (RFC 4253 sections 4.2 and 7.1), parsed from the first
//! flight of bytes (identification line, then the binary packet). Never panics on any input.

/// The kex name-list of the first KEXINIT in a flight (after the identification line).
pub fn kexinit_methods(flight: &[u8]) -> Option<Vec<String>> {
    let start = flight.windows(2).position(|w| w == b"\r\n")? + 2;
    let p = &flight[start..];
    let payload = p.get(5..)?;
    if *payload.first()? != 20 {
        return None; // not SSH_MSG_KEXINIT
    }
    let list = payload.get(17..)?;
    let len = u32::from_be_bytes(list.get(..4)?.try_into().ok()?) as usize;
    let names = std::str::from_utf8(list.get(4..4 + len)?).ok()?;
    Some(names.split(',').map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    #[test]
    fn kexinit_names() {
        let mut flight = b"SSH-2.0-x\r\n".to_vec();
        let names = b"mlkem768x25519-sha256,ext-info-c";
        let mut payload = vec![20u8];
        payload.extend_from_slice(&[0; 16]);
        payload.extend_from_slice(&(names.len() as u32).to_be_bytes());
        payload.extend_from_slice(names);
        flight.extend_from_slice(&((payload.len() + 1) as u32).to_be_bytes());
        flight.push(0);
        flight.extend_from_slice(&payload);
        assert_eq!(
            super::kexinit_methods(&flight).unwrap(),
            vec!["mlkem768x25519-sha256", "ext-info-c"]
        );
        assert_eq!(super::kexinit_methods(b"SSH-2.0-x\r\n"), None);
    }
}
